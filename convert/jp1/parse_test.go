package jp1

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	t.Parallel()
	src := `/* a comment */
unit=/grp/nightly,,jp1admin,;
{
	ty=n;
	el=A,j,+80 +48;
	ar=(f=A,t=B,seq);
	cm="say #"hi#" ## 1; two";
	unit=A,,jp1admin,;
	{
		ty=j;
		sc="/bin/echo";
		prm="a b";
	}
}
`
	units, err := Parse([]byte(src))
	require.NoError(t, err)
	require.Len(t, units, 1)
	u := units[0]
	require.Equal(t, "/grp/nightly", u.Name)
	require.Equal(t, "jp1admin", u.Owner)
	require.Equal(t, 2, u.Line)
	require.Equal(t, "n", u.Type())
	require.Equal(t, `say "hi" # 1; two`, u.Get("cm"))
	require.Equal(t, "(f=A,t=B,seq)", u.Get("ar"))
	require.Equal(t, []string{"A,j,+80 +48"}, u.All("el"))
	require.Len(t, u.Units, 1)
	require.Equal(t, "A", u.Units[0].Name)
	require.Equal(t, "/bin/echo", u.Units[0].Get("sc"))
	require.Equal(t, 8, u.Units[0].Line)
	require.Equal(t, 2, u.Units[0].Col)
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, want string }{
		{"", "line 1, column 1: no unit: a definition starts with unit=NAME,...;{ ... }"},
		{"ty=n;", `line 1, column 1: expected unit=, found "ty"`},
		{"unit=a;", "line 1, column 8: expected '{' after unit=a;"},
		{"unit=a;{ty=n", "line 1, column 9: ty= has no ';' at its end"},
		{"unit=a;{\n ty=n;", "line 1, column 1: unit a has no closing '}'"},
		{"unit=a;{\n  cm=\"x;}", "line 2, column 6: the quoted value of cm= is not closed (write #\" for a quote inside it)"},
		{"unit=a;{ ty=n }", "line 1, column 15: ty= has no ';' before '}'"},
		{"unit=a;{ /* x", "line 1, column 10: a comment /* is not closed with */"},
		{"unit=a;{ ty n; }", "line 1, column 12: expected '=' after ty"},
		{"unit=a;{ ; }", `line 1, column 10: unexpected ';' in unit a: expected a parameter key=value; or a unit`},
		{"unit=;{}", "line 1, column 1: unit= names no unit"},
		{"unit=a;{}}", `line 1, column 10: unexpected '}': expected unit=`},
		{"unit=あ;{ ty=n }", "line 1, column 15: ty= has no ';' before '}'"},
	} {
		_, err := Parse([]byte(tc.src))
		require.EqualError(t, err, tc.want, tc.src)
	}
}

func TestParseDepth(t *testing.T) {
	t.Parallel()
	src := ""
	for range MaxDepth + 2 {
		src += "unit=a;{"
	}
	_, err := Parse([]byte(src))
	require.ErrorContains(t, err, "units nest deeper than 64")
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`unit=a,,u,;{ty=n;el=b,j,+80 +48;unit=b,,u,;{ty=j;te="echo #"x#"";}}`))
	f.Add([]byte("/* c */ unit=x;{ar=(f=a,t=b);}"))
	f.Fuzz(func(t *testing.T, src []byte) {
		units, err := Parse(src)
		if err != nil {
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			require.Positive(t, pe.Line)
			require.Positive(t, pe.Col)
			return
		}
		require.NotEmpty(t, units)
	})
}
