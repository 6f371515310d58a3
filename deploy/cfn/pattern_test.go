package cfn

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPatternLookaroundsAsJavaHasThem(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern   string
		match, no []string
	}{
		// A password: a capital, a digit, 8 or more.
		{`(?=.*[A-Z])(?=.*\d).{8,}`, []string{"Secret123", "aB3aaaaa"}, []string{"secret123", "Secret", "SECRETxx"}},
		{`(?!prod$)[a-z]+`, []string{"dev", "production"}, []string{"prod", "Dev"}},
		{`[a-z]+(?<=ing)`, []string{"testing"}, []string{"tested"}},
		{`(?<!x)y+`, []string{"yy"}, []string{"xy"}},
		{`^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$`, []string{"my-bucket", "a"}, []string{"-a", "a-", ""}},
		{`(?>a+)b|a+c`, []string{"aab", "aac"}, []string{"aa"}},
		{`\w+?@(?:[\w-]+\.)+[a-z]{2,}(?!\.)`, []string{"me@example.org"}, []string{"me@example", "@a.org"}},
		{`(?=[\x41-\u005A])\S{2}`, []string{"AB"}, []string{"aB"}},
		{`(?=a)a++`, []string{"aaa"}, []string{"aab"}},
		// RE2's own patterns keep RE2.
		{`[0-9]+`, []string{"42"}, []string{"4a"}},
	} {
		p, err := CompilePattern(c.pattern)
		require.NoError(t, err, c.pattern)
		for _, s := range c.match {
			require.True(t, p.MatchString(s), "%s should match %q", c.pattern, s)
		}
		for _, s := range c.no {
			require.False(t, p.MatchString(s), "%s should not match %q", c.pattern, s)
		}
		require.Equal(t, c.pattern, p.String())
	}
	for _, c := range []struct{ pattern, err string }{
		{`(?=a`, "missing ) at offset 4"},
		{`(?<=a))`, "unmatched ) at offset 6"},
		{`(?=a)*`, "nothing to repeat at offset 5"},
		{`(?=a)[b`, "unclosed character class"},
		{`(?=a)\p{Alpha}`, `escape \p is not supported at offset 7`},
		{`(?=a)a{3,1}`, "bad repetition {3,1} at offset 6"},
		{`(?=a)a{1001}`, "repetition {1001} over 1000 at offset 6"},
	} {
		_, err := CompilePattern(c.pattern)
		require.EqualError(t, err, c.err, c.pattern)
	}
	// A value that would backtrack for ever does not match.
	p, err := CompilePattern(`(?=a)(a*)*b`)
	require.NoError(t, err)
	require.False(t, p.MatchString("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac"))
	p, err = CompilePattern(`(?=a)(?:(?:a{1000}){1000}){1000}`)
	require.NoError(t, err)
	require.False(t, p.MatchString("aaaa"))
}

func TestParameterAllowedPatternWithALookahead(t *testing.T) {
	t.Parallel()
	tp, err := Parse([]byte("Parameters:\n  Env: {Type: String, AllowedPattern: \"(?!prod$)[a-z]+\"}\nResources:\n  A: {Type: X}\n"))
	require.NoError(t, err)
	_, err = Prepare(tp, map[string]string{"Env": "dev"})
	require.NoError(t, err)
	_, err = Prepare(tp, map[string]string{"Env": "prod"})
	require.ErrorContains(t, err, "Parameter 'Env' must match pattern (?!prod$)[a-z]+")
}

func FuzzPattern(f *testing.F) {
	f.Add(`(?=.*[A-Z])(?=.*\d).{8,}`, "Secret123")
	f.Add(`(?<![\x41-\u005A-])\b\w+?(?>a|b)++{2,3}`, "xab")
	f.Add(`[^\s\\-]$`, "a\n")
	f.Fuzz(func(t *testing.T, pattern, value string) {
		if p, err := CompilePattern(pattern); err == nil {
			p.MatchString(value)
		}
	})
}
