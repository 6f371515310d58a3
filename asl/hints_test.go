package asl_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
	"stepwise/jsonvalue"
)

// hintsFor validates def and returns the hints of its diagnostic whose
// message is msg at loc, failing when there is no such diagnostic.
func hintsFor(t *testing.T, def, msg, loc string) []string {
	t.Helper()
	diags := asl.Validate([]byte(def), asl.Options{})
	hints := asl.Hints([]byte(def), diags)
	require.Len(t, hints, len(diags))
	for i, d := range diags {
		if d.Message == msg && d.Location == loc {
			return hints[i]
		}
	}
	require.Failf(t, "no such diagnostic", "%q at %q in %v", msg, loc, diags)
	return nil
}

const pass = `{"Type": "Pass", "End": true}`

func TestHints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, def, msg, loc string
		want                []string
	}{
		{
			name: "top-level field in lower case",
			def:  `{"startAt": "A", "States": {"A": ` + pass + `}}`,
			msg:  "Field 'startAt' is not supported", loc: "/",
			want: []string{"did you mean 'StartAt'? Field names are case-sensitive."},
		},
		{
			name: "the required field it stands for",
			def:  `{"StartAt": "A", "states": {"A": ` + pass + `}}`,
			msg:  "These fields are required: [States]", loc: "/",
			want: []string{"did you mean 'States' for 'states'? Field names are case-sensitive."},
		},
		{
			name: "a state's Type in lower case",
			def:  `{"StartAt": "A", "States": {"A": {"type": "Pass", "End": true}}}`,
			msg:  "These fields are required: [Type]", loc: "/States/A",
			want: []string{"did you mean 'Type' for 'type'? Field names are case-sensitive."},
		},
		{
			name: "state type in lower case",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "parallel", "End": true}}}`,
			msg:  "The field 'Type' should have one of these values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map]", loc: "/States/A/Type",
			want: []string{"did you mean 'Parallel'? State types are case-sensitive."},
		},
		{
			name: "state type misspelled",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "Succed"}}}`,
			msg:  "The field 'Type' should have one of these values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map]", loc: "/States/A/Type",
			want: []string{"did you mean 'Succeed'?"},
		},
		{
			name: "state field misspelled",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {}, "TimeoutSecond": 3, "End": true}}}`,
			msg:  "Field 'TimeoutSecond' is not supported", loc: "/States/A",
			want: []string{"did you mean 'TimeoutSeconds'?"},
		},
		{
			name: "Retry at the top level",
			def:  `{"StartAt": "A", "Retry": [], "States": {"A": ` + pass + `}}`,
			msg:  "Field 'Retry' is not supported", loc: "/",
			want: []string{"'Retry' belongs in a Task, Parallel or Map state, not at the top level of the state machine"},
		},
		{
			name: "Retry in a Pass state",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Retry": [], "End": true}}}`,
			msg:  "Field 'Retry' is not supported", loc: "/States/A",
			want: []string{"'Retry' belongs in a Task, Parallel or Map state; 'A' is a Pass state"},
		},
		{
			name: "misspelled field of another state type",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Retyr": [], "End": true}}}`,
			msg:  "Field 'Retyr' is not supported", loc: "/States/A",
			want: []string{"did you mean 'Retry'?", "'Retry' belongs in a Task, Parallel or Map state; 'A' is a Pass state"},
		},
		{
			name: "Retry written inside States",
			def:  `{"StartAt": "A", "States": {"A": ` + pass + `, "Retry": [{"ErrorEquals": ["States.ALL"]}]}}`,
			msg:  "Expected value of type [OBJECT]", loc: "/States/Retry",
			want: []string{`'Retry' is written inside "States", so it reads as a state; 'Retry' belongs in a Task, Parallel or Map state`},
		},
		{
			name: "the state it reads as is unreachable",
			def:  `{"StartAt": "A", "States": {"A": ` + pass + `, "Retry": [{"ErrorEquals": ["States.ALL"]}]}}`,
			msg:  `State "Retry" is not reachable.`, loc: "/States/Retry",
			want: []string{`'Retry' is written inside "States", so it reads as a state; 'Retry' belongs in a Task, Parallel or Map state`},
		},
		{
			name: "Catch written as one catcher",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "Parallel", "Branches": [], "Catch": {"ErrorEquals": ["States.ALL"], "Next": "A"}, "End": true}}}`,
			msg:  "Expected value of type [ARRAY]", loc: "/States/A/Catch",
			want: []string{`"Catch" takes a list of catchers: "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "..."}]`},
		},
		{
			name: "End written as a string",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": "true"}}}`,
			msg:  "Expected value of type [BOOLEAN]", loc: "/States/A/End",
			want: []string{`write true without quotes: "End": true`},
		},
		{
			name: "Seconds written as a string",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "Wait", "Seconds": "30", "End": true}}}`,
			msg:  "Expected value of type [INTEGER]", loc: "/States/A/Seconds",
			want: []string{`write the number without quotes: "Seconds": 30`},
		},
		{
			name: "no hint for a string that is no number",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "Wait", "Seconds": "thirty", "End": true}}}`,
			msg:  "Expected value of type [INTEGER]", loc: "/States/A/Seconds",
			want: nil,
		},
		{
			name: "QueryLanguage in the wrong case",
			def:  `{"QueryLanguage": "jsonata", "StartAt": "A", "States": {"A": ` + pass + `}}`,
			msg:  "Value should be one of the following: [JSONPath, JSONata]", loc: "/QueryLanguage",
			want: []string{"did you mean 'JSONata'? Values are case-sensitive."},
		},
		{
			name: "retrier field in the state",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {}, "MaxAttempts": 3, "End": true}}}`,
			msg:  "Field 'MaxAttempts' is not supported", loc: "/States/A",
			want: []string{`'MaxAttempts' belongs in a retrier, an element of a state's "Retry" array; 'A' is a Task state`},
		},
		{
			name: "retrier field misspelled",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {}, "Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempt": 3}], "End": true}}}`,
			msg:  "Field 'MaxAttempt' is not supported", loc: "/States/A/Retry[0]",
			want: []string{"did you mean 'MaxAttempts'?"},
		},
		{
			name: "choice rule operator in the wrong case",
			def:  `{"StartAt": "C", "States": {"C": {"Type": "Choice", "Choices": [{"Variable": "$.x", "Stringequals": "a", "Next": "A"}], "Default": "A"}, "A": ` + pass + `}}`,
			msg:  "Field 'Stringequals' is not supported", loc: "/States/C/Choices[0]",
			want: []string{"did you mean 'StringEquals'? Field names are case-sensitive."},
		},
		{
			name: "a state written beside States",
			def:  `{"StartAt": "A", "States": {"A": ` + pass + `}, "B": ` + pass + `}`,
			msg:  "Field 'B' is not supported", loc: "/",
			want: []string{`'B' looks like a state: states belong inside "States"`},
		},
		{
			name: "ProcessorConfig field misspelled",
			def:  `{"StartAt": "M", "States": {"M": {"Type": "Map", "ItemProcessor": {"ProcessorConfig": {"mode": "INLINE"}, "StartAt": "A", "States": {"A": ` + pass + `}}, "End": true}}}`,
			msg:  "Field 'mode' is not supported", loc: "/States/M/ItemProcessor/ProcessorConfig",
			want: []string{"did you mean 'Mode'? Field names are case-sensitive."},
		},
		{
			name: "Next naming a state in another case",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "done"}, "Done": {"Type": "Succeed"}}}`,
			msg:  "Missing 'Next' target: done", loc: "/States/A/Next",
			want: []string{"did you mean 'Done'? State names are case-sensitive."},
		},
		{
			name: "Next with a typo",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "lookup_done"}, "LookupDone": {"Type": "Succeed"}}}`,
			msg:  "Missing 'Next' target: lookup_done", loc: "/States/A/Next",
			want: []string{"did you mean 'LookupDone'?"},
		},
		{
			name: "StartAt naming a state in another case",
			def:  `{"StartAt": "a", "States": {"A": ` + pass + `}}`,
			msg:  "Missing 'Next' target: a", loc: "/StartAt",
			want: []string{"did you mean 'A'? State names are case-sensitive."},
		},
		{
			name: "Default of a Choice",
			def:  `{"StartAt": "C", "States": {"C": {"Type": "Choice", "Choices": [{"Variable": "$.x", "IsNull": true, "Next": "Fallback"}], "Default": "Fallbak"}, "Fallback": ` + pass + `}}`,
			msg:  "Missing 'Next' target: Fallbak", loc: "/States/C/Default",
			want: []string{"did you mean 'Fallback'?"},
		},
		{
			name: "Next naming a state of a branch",
			def:  `{"StartAt": "P", "States": {"P": {"Type": "Parallel", "Next": "Inner", "Branches": [{"StartAt": "Inner", "States": {"Inner": ` + pass + `}}]}}}`,
			msg:  "Missing 'Next' target: Inner", loc: "/States/P/Next",
			want: []string{`'Inner' is a state of /States/P/Branches[0]: a transition can only name a state of its own "States"`},
		},
		{
			name: "Next in a branch naming a state of its own branch",
			def:  `{"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": true, "Branches": [{"StartAt": "X", "States": {"X": {"Type": "Pass", "Next": "y"}, "Y": ` + pass + `}}]}}}`,
			msg:  "Missing 'Next' target: y", loc: "/States/P/Branches[0]/States/X/Next",
			want: []string{"did you mean 'Y'? State names are case-sensitive."},
		},
		{
			name: "no hint for a name far from every field",
			def:  `{"StartAt": "A", "Whatever": 1, "States": {"A": ` + pass + `}}`,
			msg:  "Field 'Whatever' is not supported", loc: "/",
			want: nil,
		},
		{
			name: "no hint for a Next far from every state",
			def:  `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "Elsewhere"}, "B": ` + pass + `}}`,
			msg:  "Missing 'Next' target: Elsewhere", loc: "/States/A/Next",
			want: nil,
		},
		{
			name: "a state name holding a slash",
			def:  `{"StartAt": "a/b", "States": {"a/b": {"Type": "Pass", "Retry": [], "End": true}}}`,
			msg:  "Field 'Retry' is not supported", loc: "/States/a/b",
			want: []string{"'Retry' belongs in a Task, Parallel or Map state; 'a/b' is a Pass state"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, hintsFor(t, tc.def, tc.msg, tc.loc))
		})
	}
}

// The hints never change the diagnostics: they are the same with or
// without asking for hints, and an OK definition has none.
func TestHintsLeaveDiagnosticsAlone(t *testing.T) {
	t.Parallel()
	def := []byte(`{"startAt": "A", "States": {"A": {"Type": "parallel", "End": true}}}`)
	before := asl.Validate(def, asl.Options{})
	hints := asl.Hints(def, before)
	require.Equal(t, before, asl.Validate(def, asl.Options{}))
	require.Len(t, hints, len(before))
	require.Empty(t, asl.Hints([]byte(`{"StartAt": "A", "States": {"A": `+pass+`}}`), nil))
	// Malformed JSON: no hints, one slot per diagnostic.
	bad := []byte(`{"StartAt": `)
	diags := asl.Validate(bad, asl.Options{})
	require.Equal(t, [][]string{nil}, asl.Hints(bad, diags))
}

// Corrected fixes what the hints are sure of, and the corrected definition
// brings out the errors the first ones hid.
func TestCorrected(t *testing.T) {
	t.Parallel()
	def := []byte(`{"startAt": "P", "states": {"P": {"Type": "parallel", "End": true, "Branches": [{"StartAt": "B", "States": {"B": {"Type": "Pass", "Nxt": "C"}, "C": {"Type": "Succeed"}}}]}}}`)
	diags := asl.Validate(def, asl.Options{})
	for _, d := range diags {
		require.NotContains(t, d.Location, "Branches", "the branch is hidden at first: %v", diags)
	}
	fixed, ok := asl.Corrected(def, diags)
	require.True(t, ok)
	v, err := jsonvalue.Parse(fixed)
	require.NoError(t, err)
	root := v.(*jsonvalue.Object)
	require.Equal(t, []string{"StartAt", "States"}, root.Keys(), "renamed in place")
	// The States now read bring out the parallel Type, whose fix brings
	// out the branch.
	after := asl.Validate(fixed, asl.Options{})
	require.Equal(t, []asl.Diagnostic{{Severity: asl.SeverityError, Code: asl.CodeSchemaValidationFailed,
		Message: "The field 'Type' should have one of these values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map]", Location: "/States/P/Type"}}, after)
	fixed, ok = asl.Corrected(fixed, after)
	require.True(t, ok)
	after = asl.Validate(fixed, asl.Options{})
	require.Contains(t, after, asl.Diagnostic{Severity: asl.SeverityError, Code: asl.CodeSchemaValidationFailed,
		Message: "Field 'Nxt' is not supported", Location: "/States/P/Branches[0]/States/B"})
	// The next round fixes Nxt, and then all is well.
	fixed, ok = asl.Corrected(fixed, after)
	require.True(t, ok)
	require.Empty(t, asl.Validate(fixed, asl.Options{}))
	_, ok = asl.Corrected(fixed, nil)
	require.False(t, ok)

	// A transition naming a state but for case or a typo is set to it.
	def = []byte(`{"StartAt": "a", "States": {"A": {"Type": "Pass", "Next": "lookup_done"}, "LookupDone": {"Type": "Succeed"}}}`)
	fixed, ok = asl.Corrected(def, asl.Validate(def, asl.Options{}))
	require.True(t, ok)
	require.JSONEq(t, `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "LookupDone"}, "LookupDone": {"Type": "Succeed"}}}`, string(fixed))

	// So is a value of a fixed set.
	def = []byte(`{"QueryLanguage": "jsonata", "StartAt": "A", "States": {"A": ` + pass + `}}`)
	fixed, ok = asl.Corrected(def, asl.Validate(def, asl.Options{}))
	require.True(t, ok)
	require.JSONEq(t, `{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": `+pass+`}}`, string(fixed))

	// A rename never overwrites a field that is there.
	def = []byte(`{"StartAt": "A", "startAt": "B", "States": {"A": ` + pass + `}}`)
	_, ok = asl.Corrected(def, asl.Validate(def, asl.Options{}))
	require.False(t, ok)
}

func TestJSONSyntaxError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, def string
		want      asl.SyntaxError
	}{
		{
			name: "trailing comma",
			def:  "{\"StartAt\": \"A\",\n  \"States\": {\"A\": {\"Type\": \"Pass\", \"End\": true,}}}\n",
			want: asl.SyntaxError{Line: 2, Column: 48, LineText: `  "States": {"A": {"Type": "Pass", "End": true,}}}`,
				Message: "Unexpected character ('}' (code 125)): was expecting double-quote to start field name"},
		},
		{
			name: "end of input points past the last character",
			def:  "{\"StartAt\": \"A\",\n \"States\": {\n  \"A\": {\"Type\": \"Pass\", \"End\": true}\n\n",
			want: asl.SyntaxError{Line: 3, Column: 37, LineText: `  "A": {"Type": "Pass", "End": true}`,
				Message: "Unexpected end-of-input: expected close marker for Object (start marker at line 2, column 12)"},
		},
		{
			name: "column in characters, not bytes",
			def:  `{"Comment": "日本語", "StartAt" "A"}`,
			want: asl.SyntaxError{Line: 1, Column: 30, LineText: `{"Comment": "日本語", "StartAt" "A"}`,
				Message: "Unexpected character ('\"' (code 34)): was expecting a colon to separate field name and value"},
		},
		{
			name: "CRLF line ends",
			def:  "{\r\n\"StartAt\": nope}",
			want: asl.SyntaxError{Line: 2, Column: 12, LineText: `"StartAt": nope}`,
				Message: "Unrecognized token 'nope': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := asl.JSONSyntaxError([]byte(tc.def))
			require.True(t, ok)
			require.Equal(t, tc.want, got)
			// The message is the one of the AWS diagnostic, less the
			// location AWS appends.
			diags := asl.Validate([]byte(tc.def), asl.Options{})
			require.Len(t, diags, 1)
			if !strings.Contains(tc.want.Message, "start marker") {
				require.True(t, strings.HasPrefix(diags[0].Message, tc.want.Message+"\n at [Source: "), diags[0].Message)
			}
		})
	}
	_, ok := asl.JSONSyntaxError([]byte(`{"StartAt": "A"}`))
	require.False(t, ok)
}

func FuzzHints(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add(`{"startAt": "A", "states": {"A": {"type": "pass", "Nxt": "b"}, "B": {"Type": "Succeed"}}}`)
	f.Add(`{"StartAt": "A", "States": {"A/B": {"Type": "Pass", "End": true}, "A": {"Type": "Parallel", "Branches": [{"startAt": "x", "States": {}}]}}}`)
	f.Add("{\"StartAt\": \"A\",\n\t\"States\": {,}")
	f.Fuzz(func(t *testing.T, def string) {
		data := []byte(def)
		diags := asl.Validate(data, asl.Options{})
		require.Len(t, asl.Hints(data, diags), len(diags))
		for range 4 {
			fixed, ok := asl.Corrected(data, diags)
			if !ok {
				break
			}
			_, err := jsonvalue.Parse(fixed)
			require.NoError(t, err, "a corrected definition is JSON")
			data, diags = fixed, asl.Validate(fixed, asl.Options{})
			require.Len(t, asl.Hints(data, diags), len(diags))
		}
		se, ok := asl.JSONSyntaxError([]byte(def))
		if ok {
			require.GreaterOrEqual(t, se.Line, 1)
			require.GreaterOrEqual(t, se.Column, 1)
			require.NotContains(t, se.Message, "[Source: ")
			require.LessOrEqual(t, se.Column, len([]rune(se.LineText))+1)
		}
	})
}
