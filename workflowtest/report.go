package workflowtest

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteResult prints how a case went as `go test -v` does: a failed case
// as "--- FAIL: <file>/<case> (0.00s)" and, indented below, the first
// difference and what the execution did; a passed case as
// "--- PASS: ..." when verbose, not at all otherwise.
func WriteResult(w io.Writer, r *Result, verbose bool) error {
	if r.Passed {
		if !verbose {
			return nil
		}
		_, err := fmt.Fprintf(w, "--- PASS: %s (%s)\n", r.Name, seconds(r.Duration))
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- FAIL: %s (%s)\n", r.Name, seconds(r.Duration))
	fmt.Fprintf(&b, "    %s\n", r.Failure)
	for _, g := range r.Got {
		fmt.Fprintf(&b, "        %s\n", g)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

// Counts are the passed and failed cases among results.
func Counts(results []*Result) (passed, failed int) {
	for _, r := range results {
		if r.Passed {
			passed++
		} else {
			failed++
		}
	}
	return
}

// Summary is the closing line: "N passed, N failed".
func Summary(results []*Result) string {
	passed, failed := Counts(results)
	return fmt.Sprintf("%d passed, %d failed", passed, failed)
}

// The JUnit XML report, as CI systems read it.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes results as JUnit XML: a testsuite per test file, a
// testcase per case, a failure with the first difference for each failed
// case, and for each file that could not run a testsuite with one
// testcase in error.
func WriteJUnit(w io.Writer, results []*Result, errs []*FileError) error {
	root := junitSuites{Name: "stepwise test"}
	var total time.Duration
	index := map[string]int{}
	for _, r := range results {
		i, ok := index[r.File.Path]
		if !ok {
			i = len(root.Suites)
			index[r.File.Path] = i
			root.Suites = append(root.Suites, junitSuite{Name: r.File.Path})
		}
		s := &root.Suites[i]
		c := junitCase{Name: r.Case.Name, Classname: r.File.Path, Time: fmt.Sprintf("%.3f", r.Duration.Seconds())}
		if !r.Passed {
			c.Failure = &junitProblem{Message: r.Failure, Text: strings.Join(append([]string{r.Failure}, r.Got...), "\n")}
			s.Failures++
			root.Failures++
		}
		s.Cases = append(s.Cases, c)
		s.Tests++
		root.Tests++
		total += r.Duration
	}
	for i := range root.Suites {
		var d time.Duration
		for _, r := range results {
			if r.File.Path == root.Suites[i].Name {
				d += r.Duration
			}
		}
		root.Suites[i].Time = fmt.Sprintf("%.3f", d.Seconds())
	}
	for _, e := range errs {
		msg := strings.Join(e.Problems, "\n")
		root.Suites = append(root.Suites, junitSuite{
			Name: e.Path, Tests: 1, Errors: 1, Time: "0.000",
			Cases: []junitCase{{Name: "load", Classname: e.Path, Time: "0.000",
				Error: &junitProblem{Message: e.Problems[0], Text: msg}}},
		})
		root.Tests++
		root.Errors++
	}
	root.Time = fmt.Sprintf("%.3f", total.Seconds())
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
