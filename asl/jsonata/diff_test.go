package jsonata

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/slowtest"
	"stepwise/jsonvalue"
)

// The differential test runs generated expressions through this package
// and through the reference implementation, npm jsonata 2.0.6 under node
// (testdata/diff), and requires the same value or the same error code.
// It installs the package with npm ci when node is on PATH, and skips
// when node or the package is missing, unless CI=true, where a node
// without the package fails the test. JSONATA_DIFF_DUMP=FILE writes the
// cases, one JSON line each, as testdata/diff/run.js reads them;
// JSONATA_DIFF_SEED=N generates five times as many from another seed.

const (
	diffDir   = "testdata/diff"
	diffCases = 3000
	diffSeed  = 20241105
)

// diffInputs are the documents the generated expressions read.
var diffInputs = []string{
	`{"items": [
		{"name": "apple", "price": 1.25, "qty": 4, "category": "fruit", "tags": ["red", "sweet"]},
		{"name": "bread", "price": 3, "qty": 1, "category": "bakery", "tags": []},
		{"name": "cheese", "price": 12.5, "qty": 2, "category": "dairy", "tags": ["aged"]},
		{"name": "dates", "price": 7, "qty": 0, "category": "fruit", "tags": ["sweet", "dried"]},
		{"name": "eggs", "price": 2.99, "qty": 12, "category": "dairy"}
	],
	"customer": {"first": "Ada", "last": "Lovelace", "age": 36, "vip": true, "address": {"city": "London", "zip": "W1"}},
	"n": 7, "f": -2.5, "s": "Hello, World", "empty": "", "nums": [3, 1, 4, 1, 5, 9, 2, 6],
	"flags": [true, false, true], "nothing": null,
	"nested": {"a": {"b": [1, {"c": 2}, [3, 4]]}, "d": {"e": {"f": "deep"}}}}`,
	`[{"id": 1, "v": "x", "w": [1, 2]}, {"id": 2, "v": "y", "w": [3]}, {"id": 3, "w": []}, {"id": 4, "v": "x"}]`,
	`{"Account": {"Name": "Firefly", "Order": [
		{"OrderID": "o1", "Product": [{"Name": "Bowler", "Price": 34.45, "Quantity": 2}, {"Name": "Trilby", "Price": 21.67, "Quantity": 1}]},
		{"OrderID": "o2", "Product": [{"Name": "Bowler", "Price": 34.45, "Quantity": 4}, {"Name": "Cloak", "Price": 107.99, "Quantity": 1}]}]}}`,
}

type diffCase struct {
	Expr     string `json:"expr"`
	Input    any    `json:"input,omitempty"`
	HasInput bool   `json:"hasInput"`
}

type diffResult struct {
	Value   json.RawMessage `json:"value"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
}

func TestDiffReference(t *testing.T) {
	t.Parallel()
	run := referenceRunner(t)

	inputs := make([]any, len(diffInputs))
	for i, s := range diffInputs {
		v, err := jsonvalue.ParseString(s)
		require.NoError(t, err)
		inputs[i] = v
	}
	seed, n := uint64(diffSeed), diffCases
	if v := os.Getenv("JSONATA_DIFF_SEED"); v != "" {
		_, err := fmt.Sscan(v, &seed)
		require.NoError(t, err)
		n *= 5
	}
	g := &exprGen{r: rand.New(rand.NewPCG(seed, seed))}
	cases := make([]diffCase, n)
	for i := range cases {
		in := i % len(inputs)
		g.input = in
		cases[i] = diffCase{Expr: g.top(), Input: inputs[in], HasInput: true}
	}
	want := run(cases)

	agree, raced := 0, 0
	var diffs []string
	for i, c := range cases {
		got := evalForDiff(c)
		if sameDiffResult(got, want[i]) {
			agree++
			continue
		}
		if errorRace(c.Expr, got, want[i]) {
			raced++
			continue
		}
		diffs = append(diffs, fmt.Sprintf("input %d: %s\n    go:   %s\n    node: %s", i%len(inputs), c.Expr, got, want[i]))
	}
	t.Logf("differential: %d/%d expressions agree with jsonata 2.0.6; %d more fail with another error where jsonata.js races the items of a constructor",
		agree, len(cases), raced)
	require.Empty(t, diffs, "disagreements (%d):\n%s", len(diffs), strings.Join(diffs[:min(len(diffs), 40)], "\n"))
}

// referenceRunner returns a function evaluating cases with the reference
// implementation, or skips the test.
func referenceRunner(t *testing.T) func([]diffCase) []diffResult {
	t.Helper()
	slowtest.Require(t, "jsonata.js under node, installed with npm")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the differential test against jsonata.js is skipped")
	}
	dir, err := filepath.Abs(diffDir)
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "jsonata", "package.json")); err != nil {
		out, err := installReference(dir)
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
			}
			t.Skipf("the jsonata package could not be installed (npm ci in %s: %v); the differential test is skipped", dir, err)
		}
	}
	return func(cases []diffCase) []diffResult {
		var in bytes.Buffer
		enc := json.NewEncoder(&in)
		enc.SetEscapeHTML(false)
		for _, c := range cases {
			require.NoError(t, enc.Encode(c))
		}
		if f := os.Getenv("JSONATA_DIFF_DUMP"); f != "" {
			require.NoError(t, os.WriteFile(f, in.Bytes(), 0o644))
		}
		cmd := exec.Command(node, "run.js")
		cmd.Dir = dir
		cmd.Stdin = &in
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, stderr.String())
		var res []diffResult
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			var r diffResult
			require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
			res = append(res, r)
		}
		require.Len(t, res, len(cases))
		return res
	}
}

// installReference runs npm ci once for all tests of the package.
func installReference(dir string) ([]byte, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// evalForDiff evaluates a case here, shaped as the node runner reports it.
func evalForDiff(c diffCase) diffResult {
	e, err := Compile(c.Expr)
	var v any
	var ok bool
	if err == nil {
		v, ok, err = e.EvalWith(c.Input, c.HasInput, &Options{limits: &limits{depth: 1000, steps: 1_000_000}})
	}
	if err != nil {
		je, isJ := err.(*Error)
		if !isJ {
			return diffResult{Error: "?", Message: err.Error()}
		}
		return diffResult{Error: je.Code, Message: je.Message}
	}
	if !ok {
		return diffResult{}
	}
	return diffResult{Value: jsonvalue.Marshal(v)}
}

func (r diffResult) String() string {
	switch {
	case r.Error != "":
		return r.Error + " " + r.Message
	case r.Value == nil:
		return "undefined"
	}
	return string(r.Value)
}

// errorRace reports a disagreement that is jsonata.js's scheduling: it
// evaluates the items of an array constructor and the values of an object
// constructor with Promise.all, so when several fail, the one that throws
// after the fewest awaits wins, not the first written. Here the first
// written wins. Both must fail, and the expression must have a
// constructor of more than one item.
func errorRace(expr string, a, b diffResult) bool {
	return a.Error != "" && b.Error != "" && strings.Contains(expr, ",") && strings.ContainsAny(expr, "[{")
}

func sameDiffResult(a, b diffResult) bool {
	if a.Error != "" || b.Error != "" {
		return a.Error == b.Error
	}
	if (a.Value == nil) != (b.Value == nil) {
		return false
	}
	if a.Value == nil {
		return true
	}
	x, err1 := jsonvalue.Parse(a.Value)
	y, err2 := jsonvalue.Parse(b.Value)
	return err1 == nil && err2 == nil && diffEqual(x, y)
}

// diffEqual compares JSON values exactly, objects in member order, but
// numbers within 1e-15: math.Pow and V8's Math.pow may differ in the last
// bit.
func diffEqual(a, b any) bool { return approxEqual(a, b, 1e-15, true) }

// exprGen generates JSONata expressions from a small grammar: paths with
// predicates, arithmetic, comparisons, string, array, object and
// higher-order functions, conditionals, blocks with bindings and lambdas.
// Each generator aims at a type so that most expressions evaluate; the
// rest exercise the errors.
type exprGen struct {
	r     *rand.Rand
	depth int
	input int // which of diffInputs the expression reads
}

func (g *exprGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *exprGen) chance(p float64) bool { return g.r.Float64() < p }

// deeper runs f one level down; beyond the depth limit it returns leaf.
func (g *exprGen) deeper(leaf func() string, f func() string) string {
	if g.depth >= 4 {
		return leaf()
	}
	g.depth++
	defer func() { g.depth-- }()
	return f()
}

func (g *exprGen) top() string {
	g.depth = 0
	switch g.r.IntN(9) {
	case 0:
		return g.num()
	case 1:
		return g.str()
	case 2:
		return g.arr()
	case 3:
		return g.boolean()
	case 4:
		return g.object()
	case 5:
		return g.block()
	case 6:
		return g.hof()
	case 7:
		return g.path()
	}
	return g.anyExpr()
}

func (g *exprGen) anyExpr() string {
	switch g.r.IntN(6) {
	case 0:
		return g.num()
	case 1:
		return g.str()
	case 2:
		return g.arr()
	case 3:
		return g.boolean()
	case 4:
		return g.object()
	}
	return g.path()
}

// Paths over each input.

func (g *exprGen) numPath() string {
	switch g.input {
	case 0:
		return g.pick("n", "f", "customer.age", "items[0].price", "items.price", "items.qty", "nums", "nums[2]", "nums[-1]", "nested.a.b[0]", "nested.a.b[1].c", "items[price > 5].qty", "items[$.n > 3].price", "missing")
	case 1:
		return g.pick("id", "$[0].id", "w", "$.w[0]", "$[id > 2].id", "$[1].w", "w[-1]")
	}
	return g.pick("Account.Order.Product.Price", "Account.Order.Product.Quantity", "Account.Order[0].Product[1].Price", "Account.Order.Product[Price > 30].Quantity", "Account.Order[1].Product.Price")
}

func (g *exprGen) strPath() string {
	switch g.input {
	case 0:
		return g.pick("s", "empty", "customer.first", "customer.address.city", "items.name", "items[qty > 1].name", "items[0].tags", "items.tags", "items[category = 'fruit'].name", "nested.d.e.f", "nested.**.f", "customer.*", "nothing")
	case 1:
		return g.pick("v", "$[0].v", "$[v = 'x'].id", "$.v")
	}
	return g.pick("Account.Name", "Account.Order.OrderID", "Account.Order.Product.Name", "Account.Order[0].Product.Name", "**.Name")
}

func (g *exprGen) path() string {
	switch g.r.IntN(8) {
	case 0:
		return g.numPath()
	case 1:
		return g.strPath()
	case 2:
		switch g.input {
		case 0:
			return g.pick("items", "customer", "nested", "items[1]", "items[[0..2]]", "items[-2]", "nested.a.b", "items[tags]", "items#$i[$i < 2]", "items@$it.$it.name", "items^(price)", "items^(>qty, name)", "customer.address", "$", "items[0]")
		case 1:
			return g.pick("$", "$[0]", "$[w]", "$^(>id)", "$#$i.id", "$[v].w", "*")
		}
		return g.pick("Account", "Account.Order", "Account.Order.Product", "Account.Order[0].Product[0]", "Account.Order.Product^(Price)", "**.Product")
	case 3:
		return g.deeper(g.numPath, func() string { return g.path() + "[" + g.pred() + "]" })
	case 4:
		return g.deeper(g.strPath, func() string {
			return g.path() + "." + g.pick("$string($)", "$type($)", "$count($)", "$keys($)", "[$]", "{'v': $}", "$exists($)")
		})
	case 5:
		if g.input == 0 {
			return g.pick("items.(price * qty)", "items.{'n': name, 'c': price * qty}", "items{category: $sum(price)}", "items{category: name}", "items.tags[0]", "items.[name, qty]", "items%.customer", "items.tags.%.name")
		}
		if g.input == 2 {
			return g.pick("Account.Order.Product{Name: $sum(Price * Quantity)}", "Account.Order.(OrderID & ':' & $count(Product))", "Account.Order.Product.%.OrderID", "Account.Order@$o.Product@$p.{'o': $o.OrderID, 'p': $p.Name}")
		}
		return g.pick("$.{'id': id, 'v': v}", "${v: id}", "$.w", "$.[w]")
	}
	return g.pick(g.numPath(), g.strPath())
}

func (g *exprGen) pred() string {
	switch g.r.IntN(4) {
	case 0:
		return fmt.Sprint(g.r.IntN(5) - 2)
	case 1:
		return g.boolean()
	case 2:
		switch g.input {
		case 0:
			return g.pick("price > 2", "qty = 0", "category = 'dairy'", "'sweet' in tags", "$contains(name, 'e')", "$ > 2", "$length(name) > 4")
		case 1:
			return g.pick("id > 1", "v = 'x'", "$exists(v)", "$count(w) > 0")
		}
		return g.pick("Price > 30", "Quantity > 1", "Name = 'Bowler'", "OrderID = 'o2'")
	}
	return g.num()
}

func (g *exprGen) num() string {
	return g.deeper(g.numLeaf, func() string {
		switch g.r.IntN(9) {
		case 0, 1:
			return "(" + g.num() + " " + g.pick("+", "-", "*", "/", "%") + " " + g.num() + ")"
		case 2:
			return "$" + g.pick("sum", "max", "min", "average", "count") + "(" + g.arr() + ")"
		case 3:
			return "$" + g.pick("abs", "floor", "ceil", "sqrt", "round", "number") + "(" + g.num() + ")"
		case 4:
			return g.pick("$round("+g.num()+", "+fmt.Sprint(g.r.IntN(5)-1)+")", "$power("+g.num()+", "+g.pick("2", "0.5", "-1", "3")+")", "$length("+g.str()+")", "$number("+g.pick("'12.5'", "'0x1A'", "'1e3'", "true", "'abc'", "' 7 '")+")")
		case 5:
			return "-" + g.num()
		case 6:
			return g.boolean() + " ? " + g.num() + " : " + g.num()
		case 7:
			return "$reduce(" + g.arr() + ", function($a, $b) { $a " + g.pick("+", "*", "-") + " $b }" + g.pick("", ", 0", ", 1") + ")"
		}
		return g.numPath()
	})
}

func (g *exprGen) numLeaf() string {
	if g.chance(0.4) {
		return g.numPath()
	}
	return g.pick("0", "1", "2", "3", "7", "10", "-4", "0.5", "1.25", "3.14159", "1e3", "1234567.5", "0.1", "0.2", "1e20", "1e-7", "100", "2.5e-3", "123456789012")
}

func (g *exprGen) str() string {
	return g.deeper(g.strLeaf, func() string {
		switch g.r.IntN(10) {
		case 0, 1:
			return g.str() + " & " + g.pick(g.str(), g.num(), g.boolean())
		case 2:
			return "$" + g.pick("uppercase", "lowercase", "trim", "string", "base64encode", "encodeUrlComponent", "encodeUrl") + "(" + g.str() + ")"
		case 3:
			return "$substring(" + g.str() + ", " + g.pick("0", "1", "-3", "2.5", "10") + g.pick("", ", 2", ", 0", ", -1", ", 1.6") + ")"
		case 4:
			return "$" + g.pick("substringBefore", "substringAfter") + "(" + g.str() + ", " + g.pick("'o'", "','", "'l'", "' '", "''") + ")"
		case 5:
			return "$join(" + g.pick("$split("+g.str()+", "+g.pick("' '", "''", "'l'", "/[aeiou]/")+g.pick("", ", 2")+")", "items.name", "['a', 'b', 'c']", "$map("+g.arr()+", $string)") + g.pick("", ", '-'", ", ''") + ")"
		case 6:
			return "$string(" + g.pick(g.num(), g.arr(), g.object(), g.boolean(), "null", g.num()+", true") + ")"
		case 7:
			return g.pick("$replace("+g.str()+", "+g.pick("'l'", "'o'", "/l+/", "/(\\w)(\\w)/")+", "+g.pick("'L'", "''", "'$2$1'", "'[$0]'")+")",
				"$pad("+g.str()+", "+g.pick("8", "-8", "2")+g.pick("", ", '*'", ", '-='")+")",
				"$formatNumber("+g.num()+", "+g.pick("'#,##0.00'", "'0.###'", "'000'", "'#%'", "'#,###;(#,###)'")+")",
				"$formatBase("+g.num()+", "+g.pick("2", "16", "36")+")",
				"$formatInteger("+g.num()+", "+g.pick("'w'", "'W'", "'I'", "'a'", "'0001'", "'#,##0'")+")")
		case 8:
			return g.boolean() + " ? " + g.str() + " : " + g.str()
		}
		return g.strPath()
	})
}

func (g *exprGen) strLeaf() string {
	if g.chance(0.4) {
		return g.strPath()
	}
	return g.pick("'abc'", "'Hello'", "''", "' spaced  out '", "'a,b,c'", "\"dbl\"", "'ünïcödé'", "'42'", "'x y z'", "$string(1e21)", "$string(-1.5e-9)", "1e21 & ''")
}

func (g *exprGen) arr() string {
	return g.deeper(g.arrLeaf, func() string {
		switch g.r.IntN(11) {
		case 0:
			return "[" + g.num() + ", " + g.num() + ", " + g.num() + "]"
		case 1:
			return "$sort(" + g.arr() + g.pick("", ", function($l, $r) { $l < $r }") + ")"
		case 2:
			return "$" + g.pick("reverse", "distinct", "append") + "(" + g.arr() + g.pick("", "", ", "+g.arr()) + ")"
		case 3:
			return "$map(" + g.arr() + ", " + g.lambda1() + ")"
		case 4:
			return "$filter(" + g.arr() + ", function($v, $i) { " + g.pick("$v > 2", "$i % 2 = 0", "$exists($v)", "$type($v) = 'number'") + " })"
		case 5:
			return "[" + g.pick("1..5", "0..0", "3..1", "-2..2") + "]" + g.pick("", "["+g.pred()+"]")
		case 6:
			return "$zip(" + g.arr() + ", " + g.arr() + ")"
		case 7:
			return g.arr() + "[" + g.pred() + "]"
		case 8:
			return "$keys(" + g.object() + ")"
		case 9:
			return "[" + g.anyExpr() + ", " + g.anyExpr() + "]"
		}
		return g.path()
	})
}

func (g *exprGen) arrLeaf() string {
	return g.pick("[1, 2, 3]", "[]", "[3, 1, 2, 1]", "['b', 'a', 'c']", "[[1, 2], [3]]", "nums", "items.price", "[1, 'a', true, null]", "[0.5, -1.5, 2]", g.numPath())
}

func (g *exprGen) lambda1() string {
	return g.pick(
		"function($v) { $v * 2 }",
		"function($v, $i) { $i }",
		"function($v) { $string($v) }",
		"function($v, $i, $a) { $count($a) - $i }",
		"function($v) { {'v': $v} }",
		"$string", "$boolean", "$type",
		"function($v) { $v > 1 ? 'big' : 'small' }",
	)
}

func (g *exprGen) boolean() string {
	return g.deeper(func() string { return g.pick("true", "false", "$exists(n)", "n > 3") }, func() string {
		switch g.r.IntN(7) {
		case 0:
			return g.num() + " " + g.pick("=", "!=", "<", "<=", ">", ">=") + " " + g.num()
		case 1:
			return g.str() + " " + g.pick("=", "!=", "<", ">") + " " + g.str()
		case 2:
			return g.boolean() + " " + g.pick("and", "or") + " " + g.boolean()
		case 3:
			return "$" + g.pick("not", "boolean", "exists") + "(" + g.anyExpr() + ")"
		case 4:
			return g.num() + " in " + g.arr()
		case 5:
			return "$contains(" + g.str() + ", " + g.pick("'l'", "'World'", "/o/", "''") + ")"
		}
		return g.pick("true", "false")
	})
}

func (g *exprGen) object() string {
	return g.deeper(func() string { return g.pick("{}", "{'a': 1}", "customer", "{'x': [1, 2], 'y': {'z': null}}") }, func() string {
		switch g.r.IntN(6) {
		case 0:
			return "{'a': " + g.anyExpr() + ", 'b': " + g.anyExpr() + "}"
		case 1:
			return "$merge([" + g.object() + ", " + g.object() + "])"
		case 2:
			return "$sift(" + g.object() + ", function($v, $k) { " + g.pick("$type($v) = 'number'", "$k != 'a'", "$exists($v)") + " })"
		case 3:
			return "$spread(" + g.object() + ")"
		case 4:
			return g.object() + " ~> |$|{'added': " + g.anyExpr() + "}, ['a']|"
		}
		return "$lookup(" + g.object() + ", " + g.pick("'a'", "'b'", "'first'", "'missing'") + ")"
	})
}

func (g *exprGen) block() string {
	return g.deeper(g.anyExpr, func() string {
		switch g.r.IntN(4) {
		case 0:
			return "($x := " + g.num() + "; $y := " + g.num() + "; $x " + g.pick("+", "*", "-", ">") + " $y)"
		case 1:
			return "($f := " + g.lambda1() + "; $map(" + g.arr() + ", $f))"
		case 2:
			return "($fact := function($n) { $n <= 1 ? 1 : $n * $fact($n - 1) }; $fact(" + g.pick("0", "5", "10", "3.5") + "))"
		}
		return "($s := " + g.str() + "; $length($s) & ':' & $uppercase($s))"
	})
}

func (g *exprGen) hof() string {
	return g.deeper(g.arr, func() string {
		switch g.r.IntN(5) {
		case 0:
			return g.arr() + " ~> $map(" + g.lambda1() + ")"
		case 1:
			return "$single(" + g.arr() + ", function($v) { $v = " + g.num() + " })"
		case 2:
			return "$each(" + g.object() + ", function($v, $k) { $k & '=' & $string($v) })"
		case 3:
			return "(" + g.str() + " ~> $uppercase ~> $substring(0, 3))"
		}
		return "$reduce(" + g.arr() + ", function($acc, $v) { $append($acc, $v) }, [])"
	})
}
