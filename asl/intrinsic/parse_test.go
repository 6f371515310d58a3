package intrinsic

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIsCall(t *testing.T) {
	t.Parallel()
	require.True(t, IsCall("States.Format('x')"))
	require.True(t, IsCall("States.Nope()"))
	require.False(t, IsCall("$.States"))
	require.False(t, IsCall(" States.UUID()"))
	require.False(t, IsCall("states.UUID()"))
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		expr  string
		fn    string
		paths []string
	}{
		{"NoArguments", "States.UUID()", "States.UUID", nil},
		{"SpacesInside", "States.Array( 1 , 'a' )", "States.Array", nil},
		{"NoSpaces", "States.Array(1,'a',$)", "States.Array", []string{"$"}},
		{"TrailingSpace", "States.UUID() ", "States.UUID", nil},
		{"Paths", "States.Format('{} {} {}', $.a, $$.Execution.Id, $var.field)", "States.Format", []string{"$.a", "$$.Execution.Id", "$var.field"}},
		{"NestedPaths", "States.ArrayGetItem(States.StringSplit($$.StateMachine.Name, '-'), States.MathAdd(States.ArrayLength($.x), -1))", "States.ArrayGetItem", []string{"$$.StateMachine.Name", "$.x"}},
		{"BracketPath", "States.Array($['a,b'], $.c[0])", "States.Array", []string{"$['a,b']", "$.c[0]"}},
		{"FilterPath", "States.Array($.a[?(@.b > 1)], 2)", "States.Array", []string{"$.a[?(@.b > 1)]"}},
		{"Literals", "States.Array(true, false, null, -1.5e3, 0, '')", "States.Array", nil},
		{"Escapes", `States.Format('\'\{\}\\ {}', 'x')`, "States.Format", nil},
		{"NewlineInLiteral", "States.StringSplit('Hello\nWorld', '\n')", "States.StringSplit", nil},
		{"WrongArity", "States.MathAdd(1)", "States.MathAdd", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse(tt.expr)
			require.NoError(t, err)
			require.Equal(t, strings.TrimRight(tt.expr, " "), c.String())
			require.Equal(t, tt.fn, c.Name())
			var paths []string
			for _, p := range c.Paths() {
				paths = append(paths, p.String())
			}
			require.Equal(t, tt.paths, paths)
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		expr string
		want string
	}{
		{"NotACall", "$.a", `invalid intrinsic function call: expected an intrinsic function call, found '$' at offset 0`},
		{"UnknownFunction", "States.Foo(1)", `invalid intrinsic function call: unknown intrinsic function "States.Foo" at offset 0`},
		{"WrongCase", "States.format('x')", `invalid intrinsic function call: unknown intrinsic function "States.format" at offset 0`},
		{"UnknownNested", "States.Array(States.Nope())", `invalid intrinsic function call: unknown intrinsic function "States.Nope" at offset 13`},
		{"NoParenthesis", "States.UUID", `invalid intrinsic function call: expected '(' after States.UUID, found end of expression at offset 11`},
		{"SpaceBeforeParenthesis", "States.UUID ()", `invalid intrinsic function call: expected '(' after States.UUID, found ' ' at offset 11`},
		{"Unterminated", "States.Array(1, 2", `invalid intrinsic function call: unterminated call to States.Array: expected ',' or ')' at offset 17`},
		{"MissingArgument", "States.Array(1, )", `invalid intrinsic function call: missing argument at offset 16`},
		{"LeadingComma", "States.Array(, 1)", `invalid intrinsic function call: missing argument at offset 13`},
		{"MissingComma", "States.Array(1 2)", `invalid intrinsic function call: expected ',' or ')' after argument 1 of States.Array, found '2' at offset 15`},
		{"TrailingText", "States.UUID() x", `invalid intrinsic function call: unexpected 'x' after the call at offset 14`},
		{"DoubleQuotes", `States.Format("x")`, `invalid intrinsic function call: expected an argument (string, number, true, false, null, path or intrinsic call), found '"' at offset 14`},
		{"UnterminatedString", "States.Format('abc)", `invalid intrinsic function call: unterminated string literal at offset 14`},
		{"BadEscape", `States.Format('a\nb')`, `invalid intrinsic function call: invalid escape sequence \n in string literal: only \', \{, \} and \\ are allowed at offset 16`},
		{"TrailingBackslash", `States.Format('a\`, `invalid intrinsic function call: unterminated string literal at offset 14`},
		{"BadNumber", "States.Array(01)", `invalid intrinsic function call: invalid number "01" at offset 13`},
		{"NumberRunOn", "States.Array(1abc)", `invalid intrinsic function call: invalid number "1abc" at offset 13`},
		{"BareDecimalPoint", "States.Array(1.)", `invalid intrinsic function call: invalid number: no digits after the decimal point at offset 13`},
		{"BareExponent", "States.Array(1e)", `invalid intrinsic function call: invalid number: no digits in the exponent at offset 13`},
		{"MinusAlone", "States.Array(-)", `invalid intrinsic function call: invalid number at offset 13`},
		{"UnknownWord", "States.Array(nil)", `invalid intrinsic function call: unknown literal "nil" at offset 13`},
		{"UnterminatedBracket", "States.Array($['a)", `invalid intrinsic function call: unterminated path "$['a)" at offset 13`},
		{"ObjectLiteral", "States.Array({})", `invalid intrinsic function call: expected an argument (string, number, true, false, null, path or intrinsic call), found '{' at offset 13`},
		{"Empty", "", `invalid intrinsic function call: expected an intrinsic function call, found end of expression at offset 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse(tt.expr)
			require.Nil(t, c)
			require.EqualError(t, err, tt.want)
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			require.Equal(t, tt.expr, se.Expr)
		})
	}
}

func TestParseDepth(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("States.Array(", MaxDepth) + strings.Repeat(")", MaxDepth)
	_, err := Parse(deep)
	require.NoError(t, err)

	tooDeep := strings.Repeat("States.Array(", MaxDepth+1) + strings.Repeat(")", MaxDepth+1)
	_, err = Parse(tooDeep)
	require.EqualError(t, err, "invalid intrinsic function call: intrinsic functions nested more than 64 deep at offset 832")
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want string // "" when valid
	}{
		{"States.Format('{}', 1)", ""},
		{"States.Array()", ""},
		{"States.MathRandom(1, 2)", ""},
		{"States.MathRandom(1, 2, 3)", ""},
		{"States.MathAdd(1)", "States.MathAdd takes 2 argument(s), got 1 at offset 0"},
		{"States.Format()", "States.Format takes at least 1 argument(s), got 0 at offset 0"},
		{"States.MathRandom(1)", "States.MathRandom takes 2 to 3 argument(s), got 1 at offset 0"},
		{"States.Array(States.UUID(1))", "States.UUID takes 0 argument(s), got 1 at offset 13"},
	}
	for _, tt := range tests {
		c, err := Parse(tt.expr)
		require.NoError(t, err)
		err = c.Validate()
		if tt.want == "" {
			require.NoError(t, err, tt.expr)
			continue
		}
		require.EqualError(t, err, tt.want, tt.expr)
		var ae *ArityError
		require.ErrorAs(t, err, &ae)
	}
}

func TestFunctionsRegistered(t *testing.T) {
	t.Parallel()
	names := []string{
		"States.Format", "States.StringToJson", "States.JsonToString", "States.Array",
		"States.ArrayPartition", "States.ArrayContains", "States.ArrayRange", "States.ArrayGetItem",
		"States.ArrayLength", "States.ArrayUnique", "States.Base64Encode", "States.Base64Decode",
		"States.Hash", "States.JsonMerge", "States.MathRandom", "States.MathAdd",
		"States.StringSplit", "States.UUID",
	}
	require.Len(t, functions, len(names))
	for _, n := range names {
		require.Contains(t, functions, n)
	}
}
