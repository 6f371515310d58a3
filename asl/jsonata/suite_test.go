package jsonata

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/conformance"
	"stepwise/jsonvalue"
)

// suiteDir is JSONata's own test suite in the shared folder beside the
// repository (../shared/jsonata-suite), or "" when it is not there.
var suiteDir = func() string {
	d, _ := conformance.SharedDir("jsonata-suite")
	return d
}()

type suiteCase struct {
	Expr            string          `json:"expr"`
	ExprFile        string          `json:"expr-file"`
	Data            json.RawMessage `json:"data"`
	Dataset         *string         `json:"dataset"`
	Bindings        json.RawMessage `json:"bindings"`
	Result          json.RawMessage `json:"result"`
	UndefinedResult bool            `json:"undefinedResult"`
	Code            string          `json:"code"`
	Error           *struct {
		Code string `json:"code"`
	} `json:"error"`
}

func loadCases(t testing.TB, path string) []suiteCase {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var cases []suiteCase
	if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
		require.NoError(t, json.Unmarshal(raw, &cases))
	} else {
		var c suiteCase
		require.NoError(t, json.Unmarshal(raw, &c))
		cases = []suiteCase{c}
	}
	for i := range cases {
		if cases[i].ExprFile != "" {
			b, err := os.ReadFile(filepath.Join(filepath.Dir(path), cases[i].ExprFile))
			require.NoError(t, err)
			cases[i].Expr = string(b)
		}
	}
	return cases
}

// approxEqual compares JSON values with numbers equal within a relative
// tolerance; ordered also requires objects' members in the same order.
func approxEqual(a, b any, tol float64, ordered bool) bool {
	switch x := a.(type) {
	case jsonvalue.Number:
		y, ok := b.(jsonvalue.Number)
		if !ok {
			return false
		}
		fx, fy := x.Float64(), y.Float64()
		return fx == fy || math.Abs(fx-fy) <= tol*math.Max(math.Abs(fx), math.Abs(fy))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !approxEqual(x[i], y[i], tol, ordered) {
				return false
			}
		}
		return true
	case *jsonvalue.Object:
		y, ok := b.(*jsonvalue.Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i := range x.Len() {
			k, v := x.At(i)
			if ordered {
				if k2, w := y.At(i); k2 != k || !approxEqual(v, w, tol, ordered) {
					return false
				}
				continue
			}
			if w, ok := y.Get(k); !ok || !approxEqual(v, w, tol, ordered) {
				return false
			}
		}
		return true
	}
	return a == b
}

// suiteEqual compares as the suite does: numerically, ignoring key order.
func suiteEqual(a, b any) bool { return approxEqual(a, b, 1e-13, false) }

func runCase(c suiteCase, datasets map[string]any) (ok bool, why string) {
	defer func() {
		if r := recover(); r != nil {
			ok, why = false, "panic"
		}
	}()
	var input any
	if len(c.Data) > 0 {
		v, err := jsonvalue.Parse(c.Data)
		if err != nil {
			return false, "bad data"
		}
		input = v
	} else if c.Dataset != nil {
		input = datasets[*c.Dataset]
	}
	vars := map[string]any{}
	if len(c.Bindings) > 0 {
		b, err := jsonvalue.Parse(c.Bindings)
		if err == nil {
			if o, ok := b.(*jsonvalue.Object); ok {
				for k, v := range o.All() {
					vars[k] = v
				}
			}
		}
	}
	wantCode := c.Code
	if c.Error != nil {
		wantCode = c.Error.Code
	}
	e, err := Compile(c.Expr)
	var res any
	var defined bool
	if err == nil {
		if len(c.Data) == 0 && c.Dataset == nil {
			res, defined, err = e.EvalUndefined(vars)
		} else {
			res, defined, err = e.Eval(input, vars)
		}
	}
	if wantCode != "" {
		if err == nil {
			return false, "expected error " + wantCode
		}
		je, isJ := err.(*Error)
		if !isJ || je.Code != wantCode {
			return false, "wrong error " + err.Error()
		}
		return true, ""
	}
	if err != nil {
		return false, err.Error()
	}
	if c.UndefinedResult || len(c.Result) == 0 {
		if defined {
			return false, "expected undefined, got " + jsonvalue.String(res)
		}
		return true, ""
	}
	want, perr := jsonvalue.Parse(c.Result)
	if perr != nil {
		return false, "bad result"
	}
	if !defined || !suiteEqual(want, res) {
		return false, "got " + jsonvalue.String(res)
	}
	return true, ""
}

func TestSuite(t *testing.T) {
	t.Parallel()
	if suiteDir == "" {
		t.Skip("skipping JSONata's test suite: ../shared/jsonata-suite is not beside the repository")
	}
	datasets := map[string]any{}
	files, err := filepath.Glob(filepath.Join(suiteDir, "datasets", "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		v, err := jsonvalue.Parse(raw)
		require.NoError(t, err)
		datasets[strings.TrimSuffix(filepath.Base(f), ".json")] = v
	}
	groups, err := os.ReadDir(filepath.Join(suiteDir, "groups"))
	require.NoError(t, err)
	total, passed := 0, 0
	var lines []string
	verbose := os.Getenv("JSONATA_SUITE_VERBOSE") != ""
	for _, g := range groups {
		caseFiles, _ := filepath.Glob(filepath.Join(suiteDir, "groups", g.Name(), "*.json"))
		sort.Strings(caseFiles)
		gt, gp := 0, 0
		for _, cf := range caseFiles {
			for i, c := range loadCases(t, cf) {
				gt++
				ok, why := runCase(c, datasets)
				if ok {
					gp++
				} else if verbose {
					t.Logf("FAIL %s/%s[%d] %q: %s", g.Name(), filepath.Base(cf), i, c.Expr, why)
				}
			}
		}
		total += gt
		passed += gp
		lines = append(lines, g.Name()+": "+itoa(gp)+"/"+itoa(gt))
	}
	for _, l := range lines {
		t.Log(l)
	}
	t.Logf("JSONata suite: %d/%d passed (%.1f%%)", passed, total, 100*float64(passed)/float64(max(total, 1)))
}
