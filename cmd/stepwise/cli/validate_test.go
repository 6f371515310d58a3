package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The hints come on their own lines, after the diagnostic in AWS's words,
// which is printed as before.
func TestValidateHints(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", `{"startAt": "A", "States": {"A": {"Type": "Pass", "Retry": [], "Next": "b"}, "B": {"Type": "succeed"}}}`)
	out, _, code := execute("validate", def)
	require.Equal(t, 1, code)
	require.Equal(t, strings.Join([]string{
		def + ": ERROR SCHEMA_VALIDATION_FAILED /: These fields are required: [StartAt]",
		"    hint: did you mean 'StartAt' for 'startAt'? Field names are case-sensitive.",
		def + ": ERROR SCHEMA_VALIDATION_FAILED /: Field 'startAt' is not supported",
		"    hint: did you mean 'StartAt'? Field names are case-sensitive.",
		def + ": ERROR SCHEMA_VALIDATION_FAILED /States/A: Field 'Retry' is not supported",
		"    hint: 'Retry' belongs in a Task, Parallel or Map state; 'A' is a Pass state",
		def + ": ERROR SCHEMA_VALIDATION_FAILED /States/B/Type: The field 'Type' should have one of these values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map]",
		"    hint: did you mean 'Succeed'? State types are case-sensitive.",
		def + ": ERROR MISSING_TRANSITION_TARGET /States/A/Next: Missing 'Next' target: b",
		"    hint: did you mean 'B'? State names are case-sensitive.",
		def + ": ERROR MISSING_END_STATE /: Workflow has no terminal state",
		"",
	}, "\n"), out)

	// --format json: the diagnostics as AWS gives them, each with its hints.
	out, _, code = execute("validate", "--format", "json", def)
	require.Equal(t, 1, code)
	var resp validateResponse
	require.NoError(t, json.Unmarshal([]byte(out), &resp))
	require.Len(t, resp.Diagnostics, 6)
	require.Equal(t, "Field 'startAt' is not supported", resp.Diagnostics[1].Message)
	require.Equal(t, []string{"did you mean 'StartAt'? Field names are case-sensitive."}, resp.Diagnostics[1].Hints)
	require.Empty(t, resp.Diagnostics[5].Hints)
}

// The errors a misspelled "States" or an unknown Type hides come after
// the first ones, found once the hints' corrections are made.
func TestValidateHiddenErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", `{"StartAt": "P", "states": {"P": {"Type": "parallel", "End": true, "Branches": [{"StartAt": "X", "States": {"X": {"Type": "Pass", "Nxt": "Y"}, "Y": {"Type": "Succeed"}}}]}}}`)
	out, _, code := execute("validate", def)
	require.Equal(t, 1, code)
	first, hidden, ok := strings.Cut(out, def+": once the hints above are followed, these errors remain:\n")
	require.True(t, ok, out)
	require.Contains(t, first, "Field 'states' is not supported\n    hint: did you mean 'States'?")
	require.NotContains(t, first, "parallel")
	require.Contains(t, hidden, def+": ERROR SCHEMA_VALIDATION_FAILED /States/P/Type: The field 'Type' should have one of these values")
	require.Contains(t, hidden, "    hint: did you mean 'Parallel'? State types are case-sensitive.\n")
	require.Contains(t, hidden, def+": ERROR SCHEMA_VALIDATION_FAILED /States/P/Branches[0]/States/X: Field 'Nxt' is not supported\n    hint: did you mean 'Next'?\n")
	// Each error once.
	require.Equal(t, 1, strings.Count(out, "Field 'Nxt' is not supported"))

	// Nothing hidden: no such section.
	plain := b.write(t, "plain.json", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "Nowhere"}}}`)
	out, _, code = execute("validate", plain)
	require.Equal(t, 1, code)
	require.NotContains(t, out, "once the hints")
}

// Malformed JSON is one line, FILE:LINE:COLUMN, then the line and a caret
// under the column, instead of the whole text quoted.
func TestValidateJSONSyntaxCaret(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", "{\n\t\"StartAt\": \"A\",\n\t\"States\": {\"A\": {\"Type\": \"Pass\" \"End\": true}}\n}\n")
	out, _, code := execute("validate", def)
	require.Equal(t, 1, code)
	require.Equal(t, def+":3:34: ERROR INVALID_JSON_DESCRIPTION: Unexpected character ('\"' (code 34)): was expecting comma to separate Object entries\n"+
		"    \t\"States\": {\"A\": {\"Type\": \"Pass\" \"End\": true}}\n"+
		"    \t                                ^\n", out)

	// --format json keeps the diagnostic as AWS words it.
	out, _, code = execute("validate", "--format", "json", def)
	require.Equal(t, 1, code)
	require.Contains(t, out, `at [Source: (String)`)
}

func TestCaretExcerpt(t *testing.T) {
	t.Parallel()
	text, caret := caretExcerpt("abc", 2)
	require.Equal(t, "abc", text)
	require.Equal(t, " ^", caret)
	text, caret = caretExcerpt("abc", 4)
	require.Equal(t, "abc", text)
	require.Equal(t, "   ^", caret)
	text, caret = caretExcerpt("\t\tx", 3)
	require.Equal(t, "\t\t^", caret)
	require.Equal(t, "\t\tx", text)

	long := strings.Repeat("a", 300) + "X" + strings.Repeat("b", 300)
	text, caret = caretExcerpt(long, 301)
	require.True(t, strings.HasPrefix(text, "...") && strings.HasSuffix(text, "..."), text)
	require.Equal(t, caretMaxWidth+6, len([]rune(text)))
	require.Equal(t, "X", string([]rune(text)[len([]rune(caret))-1]), "the caret is under the column")
	// Near the start: no leading cut.
	text, caret = caretExcerpt(long, 1)
	require.True(t, strings.HasPrefix(text, "aaa") && strings.HasSuffix(text, "..."))
	require.Equal(t, "^", caret)
	// Near the end: no trailing cut.
	text, caret = caretExcerpt(long, len(long)+1)
	require.True(t, strings.HasPrefix(text, "...") && strings.HasSuffix(text, "bbb"))
	require.Equal(t, len([]rune(text))+1, len([]rune(caret)))
}

func FuzzCaretExcerpt(f *testing.F) {
	f.Add("abc", 2)
	f.Add("\t日本語\tx", 4)
	f.Add(strings.Repeat("x", 500), 250)
	f.Fuzz(func(t *testing.T, line string, column int) {
		if column < 1 || strings.ContainsAny(line, "\n") {
			return
		}
		text, caret := caretExcerpt(line, column)
		require.True(t, strings.HasSuffix(caret, "^"))
		require.LessOrEqual(t, len([]rune(caret)), len([]rune(text))+1)
		require.LessOrEqual(t, len([]rune(text)), caretMaxWidth+6)
	})
}
