package yamlsize_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"stepwise/internal/testkit/hostile"
	"stepwise/internal/yamlsize"
)

func parse(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(text), &doc))
	return &doc
}

func TestCheck(t *testing.T) {
	t.Parallel()
	// Nine levels of nine aliases: 9⁹ strings from a few hundred bytes,
	// measured without being expanded.
	bomb := hostile.AliasBomb()
	start := time.Now()
	err := yamlsize.Check(parse(t, bomb), yamlsize.Default)
	require.EqualError(t, err, "line 7: the document expands to more than 1000000 values (aliases within aliases?)")
	var tl *yamlsize.TooLargeError
	require.ErrorAs(t, err, &tl)
	require.Equal(t, "values", tl.What)
	require.Less(t, time.Since(start), time.Second)

	// Few values, much text: a 1 MiB string named 96 times.
	text := "a: &a \"" + strings.Repeat("x", 1<<20) + "\"\nb: &b [" + strings.Repeat("*a,", 31) + "*a]\nc: [*b, *b, *b]\n"
	err = yamlsize.Check(parse(t, text), yamlsize.Default)
	require.EqualError(t, err, "line 3: the document expands to more than 67108864 bytes of text (aliases within aliases?)")

	// Within the limits: counted exactly (the document, the mapping, two
	// keys, the sequence of two, and the alias's copy of it).
	doc := parse(t, "a: &x [1, 22]\nb: *x\n")
	require.NoError(t, yamlsize.Check(doc, yamlsize.Default))
	require.NoError(t, yamlsize.Check(doc, yamlsize.Limits{Values: 10, Bytes: 8}))
	require.EqualError(t, yamlsize.Check(doc, yamlsize.Limits{Values: 9, Bytes: 100}), "line 1: the document expands to more than 9 values (aliases within aliases?)")
	require.EqualError(t, yamlsize.Check(doc, yamlsize.Limits{Values: 100, Bytes: 7}), "line 1: the document expands to more than 7 bytes of text (aliases within aliases?)")
}
