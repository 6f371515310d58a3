package intrinsic

import (
	"errors"
	"strings"
	"testing"

	"stepwise/asl/jsonpath"
	"stepwise/failure"
	"stepwise/jsonvalue"
)

func FuzzParse(f *testing.F) {
	seeds := []string{
		// Valid calls.
		"States.Format('Hello {}', $.name)",
		"States.Format('{} {}', $$.Execution.Id, $var.field)",
		`States.Format('\'\{\}\\ {}', 'x')`,
		"States.StringToJson($)",
		`States.StringToJson('{"a": [1, 2]}')`,
		"States.JsonToString($)",
		"States.Array()",
		"States.Array(1, -2.5e3, true, false, null, 'x', $)",
		"States.ArrayPartition(States.Array(1,2,3,4,5), 2)",
		"States.ArrayContains($, States.Array(1))",
		"States.ArrayRange(1, 9, 2)",
		"States.ArrayGetItem(States.StringSplit($$.StateMachine.Name, '-'), 0)",
		"States.ArrayLength($)",
		"States.ArrayUnique(States.Array(1, 1, '1'))",
		"States.Base64Encode('hello')",
		"States.Base64Decode('aGVsbG8=')",
		"States.Hash('hello', 'SHA-256')",
		"States.JsonMerge($, $, false)",
		"States.MathRandom(1, 100, 42)",
		"States.MathAdd(States.MathAdd(1, 2), -1.5)",
		"States.StringSplit('a,b', ',')",
		"States.UUID()",
		"States.Array($['a,b'], $.c[?(@.d > 1)])",
		"States.StringSplit('Hello\nWorld', '\n')",
		// Invalid ones.
		"",
		"States.",
		"States.Foo()",
		"States.Format(",
		"States.Format('x'",
		"States.Format('x\\n')",
		"States.Array(1,)",
		"States.Array(,)",
		"States.Array(01)",
		"States.Array($['x)",
		"States.Array(States.Array(States.Array(",
		"States.MathAdd(1)",
		"States.Format('{')",
		"States.ArrayRange(0, 2147483647, 1)",
		"States.StringToJson('[[[[[[[[')",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	env := &jsonpath.Env{
		Input:   []any{jsonvalue.Number("1"), "a,b", nil},
		Context: jsonvalue.NewObject(0),
	}
	f.Fuzz(func(t *testing.T, expr string) {
		c, err := Parse(expr)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) returned %T, want *SyntaxError", expr, err)
			}
			if se.Offset < 0 || se.Offset > len(expr) {
				t.Fatalf("Parse(%q): offset %d out of range", expr, se.Offset)
			}
			return
		}
		if c.String() != strings.TrimRight(expr, " \t\n\r") {
			t.Fatalf("String() = %q, want %q", c.String(), expr)
		}
		// A parsed call prints back to itself and parses again.
		if _, err := Parse(c.String()); err != nil {
			t.Fatalf("reparse %q: %v", c.String(), err)
		}
		_ = c.Paths()
		_ = c.Validate()
		v, err := c.Eval(env)
		if err != nil {
			var fail *failure.Failure
			if !errors.As(err, &fail) || fail.Name != failure.Runtime {
				t.Fatalf("Eval(%q) returned %v, want a States.Runtime failure", expr, err)
			}
			return
		}
		_ = jsonvalue.String(v) // every result is a JSON value
	})
}
