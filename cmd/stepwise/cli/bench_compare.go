package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// benchFigures are a bench report's figures, in the order it gives them.
type benchFigures []benchFigure

type benchFigure struct {
	name  string
	value float64
}

func (f *benchFigures) add(name string, value float64) {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return // nothing measured (no time elapsed): no figure
	}
	*f = append(*f, benchFigure{name, value})
}

// write prints the figures as one JSON object on a line, in their order.
func (f benchFigures) write(w io.Writer) error {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, fig := range f {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(fig.name))
		b.WriteString(": ")
		b.WriteString(strconv.FormatFloat(fig.value, 'f', -1, 64))
	}
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

type benchCompareCommand struct {
	*CommandBase
}

func (c *benchCompareCommand) command() *cobra.Command {
	return &cobra.Command{
		Use:   "compare BASE.jsonl HEAD.jsonl",
		Short: "Compare the figures of two sets of bench runs",
		Long: `Read two files of "stepwise bench --json" objects, one a line (one a
run), and print for each figure the median of BASE's runs, the median of
HEAD's and their ratio HEAD/BASE. A figure missing from one side is
printed with "-".`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			base, err := readBenchRuns(args[0])
			if err != nil {
				return err
			}
			head, err := readBenchRuns(args[1])
			if err != nil {
				return err
			}
			return writeBenchComparison(c.Out, base, head)
		},
	}
}

// benchRuns are the figures of several runs: each figure's values, and
// the figures' names in the order they first came.
type benchRuns struct {
	names  []string
	values map[string][]float64
	runs   int
}

// readBenchRuns reads a file of bench --json lines.
func readBenchRuns(path string) (*benchRuns, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseBenchRuns(f, path)
}

func parseBenchRuns(r io.Reader, name string) (*benchRuns, error) {
	runs := &benchRuns{values: map[string][]float64{}}
	lines := bufio.NewScanner(r)
	lines.Buffer(nil, 1<<20)
	for n := 1; lines.Scan(); n++ {
		line := bytes.TrimSpace(lines.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		tok, err := dec.Token()
		if err != nil || tok != json.Delim('{') {
			return nil, fmt.Errorf("%s:%d: not a JSON object of figures", name, n)
		}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			var v float64
			if err := dec.Decode(&v); err != nil {
				return nil, fmt.Errorf("%s:%d: figure %v: not a number", name, n, key)
			}
			k := key.(string)
			if _, ok := runs.values[k]; !ok {
				runs.names = append(runs.names, k)
			}
			runs.values[k] = append(runs.values[k], v)
		}
		runs.runs++
	}
	if err := lines.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if runs.runs == 0 {
		return nil, fmt.Errorf("%s: no runs", name)
	}
	return runs, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// writeBenchComparison prints the table: figure, BASE median, HEAD
// median, HEAD/BASE; the figures in BASE's order, then HEAD's new ones.
func writeBenchComparison(w io.Writer, base, head *benchRuns) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "figure\tBASE (%d runs)\tHEAD (%d runs)\tHEAD/BASE\t\n", base.runs, head.runs)
	names := slices.Clone(base.names)
	for _, n := range head.names {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	cell := func(r *benchRuns, name string) (string, float64, bool) {
		v, ok := r.values[name]
		if !ok {
			return "-", 0, false
		}
		m := median(v)
		return strconv.FormatFloat(m, 'f', 1, 64), m, true
	}
	for _, n := range names {
		bs, b, bok := cell(base, n)
		hs, h, hok := cell(head, n)
		ratio := "-"
		if bok && hok && b != 0 {
			ratio = strconv.FormatFloat(h/b, 'f', 2, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", n, bs, hs, ratio)
	}
	return tw.Flush()
}
