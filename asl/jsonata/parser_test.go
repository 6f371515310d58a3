package jsonata

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/jsonvalue"
)

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src   string
		code  string
		pos   int
		token string
	}{
		{"", "S0207", 0, ""},
		{"1 +", "S0207", 3, ""},
		{"(1; 2", "S0203", 5, ")"},
		{"[1, 2", "S0203", 5, "]"},
		{`"abc`, "S0101", 4, ""},
		{`'a\q'`, "S0103", 3, "q"},
		{"/* x", "S0106", 0, ""},
		{"`abc", "S0105", 4, ""},
		{"1 ! 2", "S0204", 3, "!"},
		{"$x := 1 := 2", "S0212", 7, ""},
		{"a.1", "S0213", 3, ""},
		{"function(a){1}", "S0208", 10, "a"},
		{"{'a': 1}{'b':2}{'c':3}", "S0210", 16, ""},
		{"foo@bar", "S0214", 7, "@"},
		{"1e999", "S0102", 5, "1e999"},
		{"/ab", "S0302", 0, ""},
		{"[1 2]", "S0202", 4, "2"},
		{"%.name", "S0217", 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			t.Parallel()
			_, err := Compile(tt.src)
			var je *Error
			require.True(t, errors.As(err, &je), "want *Error, got %v", err)
			require.Equal(t, tt.code, je.Code)
			require.Equal(t, tt.pos, je.Position)
			require.Equal(t, tt.token, je.Token)
		})
	}
}

func TestCompileValid(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"Account.Order[0].Product.Price",
		"$sum(Account.Order.Product.(Price * Quantity))",
		"Account.Order#$i.Product@$p{ $string($i): $p.Price }",
		"**.Price[$ > 30]^(>$)",
		"($x := function($a, $b)<nn:n>{ $a + $b }; $x(1, ?))",
		"$ ~> |Account.Order|{'x': 1}, ['y']|",
		"/ab+c/i",
		"a ? b : c",
		"[1..5]",
		"Account.Order.Product.%.OrderID",
	} {
		_, err := Compile(src)
		require.NoError(t, err, src)
	}
}

func TestEvalBasics(t *testing.T) {
	t.Parallel()
	input, err := jsonvalue.ParseString(`{"a":[{"b":1},{"b":2},{"b":3}],"s":"hello"}`)
	require.NoError(t, err)
	tests := []struct {
		src  string
		want string
	}{
		{"a.b", "[1,2,3]"},
		{"a[0].b", "1"},
		{"a[b > 1].b", "[2,3]"},
		{"$sum(a.b)", "6"},
		{"$uppercase(s)", `"HELLO"`},
		{"a.b[]", "[1,2,3]"},
		{"a[0].b[]", "[1]"},
		{"{ 'n': $count(a) }", `{"n":3}`},
		{"$round(2.5)", "2"},
		{"$round(3.5)", "4"},
		{"a#$i[$i = 1].b", "2"},
		{"$map([1,2], function($v){ $v * 10 })", "[10,20]"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			t.Parallel()
			e, err := Compile(tt.src)
			require.NoError(t, err)
			got, defined, err := e.Eval(input, nil)
			require.NoError(t, err)
			require.True(t, defined)
			require.Equal(t, tt.want, jsonvalue.String(got))
		})
	}
}

func TestEvalErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		code string
	}{
		{`1 + "a"`, "T2002"},
		{`"a" + 1`, "T2001"},
		{`1 < "a"`, "T2009"},
		{`$foo()`, "T1006"},
		{`$substring(true)`, "T0410"},
		{`$string(1/0)`, "D3001"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			t.Parallel()
			e, err := Compile(tt.src)
			require.NoError(t, err)
			_, _, err = e.Eval(nil, nil)
			var je *Error
			require.True(t, errors.As(err, &je), "want *Error, got %v", err)
			require.Equal(t, tt.code, je.Code)
		})
	}
}
