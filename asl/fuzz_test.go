package asl_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
)

// fuzzSeeds are definitions shaped like real ones, valid and not.
var fuzzSeeds = []string{
	nestedWhileLoop,
	`{"StartAt": "Parallel", "States": {"parallel": {"Type": "Parallel", "Branches": [{"StartAt": "B", "States": {"B": {"Type": "Pass", "End": true}}}], "End": true}}}`,
	`{"Comment": "WAIT_TIMESTAMP", "StartAt": "WaitUntil", "States": {"WaitUntil": {"Type": "Wait", "Timestamp": "2016-13-05T21:29:29Z", "End": true}}}`,
	`{"StartAt": "Map", "QueryLanguage": "JSONPath", "States": {"Map": {"Type": "Map", "QueryLanguage": "JSONata", "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"}, "StartAt": "Pass", "States": {"Pass": {"QueryLanguage": "JSONPath", "Type": "Pass", "End": true}}}, "End": true}}}`,
	`{"StartAt": "Publish", "States": {"Publish": {"Type": "Task", "Resource": "arn:aws:states:::sns:publish.waitForTaskToken", "Parameters": {"TopicArn.$": "$.TopicArn", "Message": {"TaskToken.$": "$$.Task.Token", "arg1.$": "States.Format('{}', $.a)"}}, "End": true}}}`,
	`{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "B"}, "B": {"Type": "Pass", "Next": "A"}}}`,
	`{"StartAt": "C", "States": {"C": {"Type": "Choice", "Choices": [{"And": [{"Variable": "$.a", "StringEquals": "x"}, {"Not": {"Variable": "$.b", "IsPresent": true}}], "Next": "C"}], "Default": "D"}, "D": {"Type": "Fail", "ErrorPath": "$.e", "CausePath": "States.Format('{}', $.c)"}}}`,
	`{"QueryLanguage": "JSONata", "StartAt": "M", "States": {"M": {"Type": "Map", "Items": "{% $states.input %}", "MaxConcurrency": "{% 2 %}", "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "EXPRESS"}, "StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Arguments": {"p": "{% $states.input %}"}, "Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 2}], "End": true}}}, "ItemReader": {"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": {"InputType": "JSON"}}, "ResultWriter": {"WriterConfig": {"Transformation": "NONE", "OutputType": "JSON"}}, "End": true}}}`,
	`{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "TimeoutSecondsPath": "$.t", "HeartbeatSeconds": 5, "Catch": [{"ErrorEquals": ["States.TaskFailed"], "ResultPath": null, "Next": "W"}], "Next": "W"}, "W": {"Type": "Wait", "SecondsPath": "$.s", "End": true}}}`,
	`{"StartAt": "M", "States": {"M": {"Type": "Map", "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}, "ItemReader": {"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": {"InputType": "PARQUET", "ManifestType": "ATHENA_DATA", "MaxItems": 5}, "Parameters": {"Bucket": "b", "Key.$": "$.k"}}, "End": true}}}`,
	`{"StartAt": "M", "States": {"M": {"Type": "Map", "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}, "ItemReader": {"Resource": "arn:aws:states:::s3:listObjectsV2", "ReaderConfig": {"InputType": "JSON", "Transformation": "LOAD_AND_FLATTEN", "ItemsPointer": "/a~1b/0"}, "Parameters": {"Bucket": "b", "Prefix": "p/"}}, "End": true}}}`,
	`not a definition`,
	`{"a": [1, 2}`,
	``,
	`{}`,
	`{"StartAt": "A", "States": {"A": {"Type": "Pass", "Parameters": {"a": 1, "a.$": "$.a"}, "End": true}, "A": {"Type": "Succeed"}}}`,
}

// nested returns a definition whose JSON nests n levels deep inside a
// Parallel state, and a Choice rule nested n levels deep.
func nestedSeeds(n int) []string {
	var par strings.Builder
	for i := range n {
		name := "P" + strconv.Itoa(i)
		par.WriteString(`{"StartAt": "` + name + `", "States": {"` + name + `": {"Type": "Parallel", "End": true, "Branches": [`)
	}
	par.WriteString(`{"StartAt": "X", "States": {"X": {"Type": "Succeed"}}}`)
	for range n {
		par.WriteString(`]}}}`)
	}
	not := `{"StartAt": "C", "States": {"C": {"Type": "Choice", "Default": "D", "Choices": [{"Next": "D", ` +
		strings.Repeat(`"Not": {`, n) + `"Variable": "$.x", "IsNull": true` + strings.Repeat(`}`, n) +
		`}]}, "D": {"Type": "Succeed"}}}`
	return []string{par.String(), not, strings.Repeat("[", 5000), strings.Repeat(`{"a":`, 1200) + "1" + strings.Repeat("}", 1200)}
}

func FuzzParse(f *testing.F) {
	for _, s := range append(fuzzSeeds, nestedSeeds(150)...) {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, def string, express bool) {
		opts := asl.Options{MaxDiagnostics: 20}
		if express {
			opts.Type = asl.TypeExpress
		}
		sm, diags := asl.ParseWith([]byte(def), opts)
		require.LessOrEqual(t, len(diags), 20)
		require.Equal(t, sm == nil, asl.HasErrors(diags))
		for _, d := range diags {
			require.NotEmpty(t, d.Code)
			require.NotEmpty(t, d.Message)
			_ = d.String()
		}
		if sm != nil {
			checkMachine(t, sm)
		}
	})
}

// checkMachine checks the invariants of a parsed machine: what the
// interpreter may rely on without checking again.
func checkMachine(t *testing.T, sm *asl.StateMachine) {
	require.Len(t, sm.Order, len(sm.States))
	require.Contains(t, sm.States, sm.StartAt)
	target := func(name string) {
		if name != "" {
			require.Contains(t, sm.States, name)
		}
	}
	for _, name := range sm.Order {
		st := sm.States[name]
		require.Equal(t, name, st.Name)
		require.NotEmpty(t, st.Type)
		target(st.Next)
		target(st.Default)
		for _, r := range st.Choices {
			require.NotEmpty(t, r.Next)
			target(r.Next)
		}
		for _, c := range st.Catch {
			require.NotEmpty(t, c.Next)
			target(c.Next)
			require.NotEmpty(t, c.ErrorEquals)
		}
		for _, r := range st.Retry {
			require.NotEmpty(t, r.ErrorEquals)
		}
		switch st.Type {
		case asl.TypeTask:
			require.NotEmpty(t, st.Resource)
		case asl.TypeChoice:
			require.NotEmpty(t, st.Choices)
		case asl.TypeWait:
			n := 0
			for _, set := range []bool{st.Seconds != nil, st.SecondsPath != nil, st.Timestamp != nil, st.TimestampPath != nil, st.WaitExpr != ""} {
				if set {
					n++
				}
			}
			require.Equal(t, 1, n)
		case asl.TypeParallel:
			require.NotEmpty(t, st.Branches)
		case asl.TypeMap:
			require.NotNil(t, st.ItemProcessor)
		case asl.TypePass, asl.TypeSucceed, asl.TypeFail:
		}
		if st.Type != asl.TypeChoice && st.Type != asl.TypeSucceed && st.Type != asl.TypeFail {
			require.True(t, (st.Next != "") != st.End, "exactly one of Next and End")
		}
		if st.QueryLanguage == asl.JSONPath {
			require.False(t, st.HasOutput)
			require.Nil(t, st.Arguments)
		} else {
			require.Nil(t, st.InputPath)
			require.Nil(t, st.Parameters)
		}
		for _, b := range st.Branches {
			checkMachine(t, b)
		}
		if st.ItemProcessor != nil {
			checkMachine(t, st.ItemProcessor)
		}
	}
}

func TestParse_deepNesting(t *testing.T) {
	t.Parallel()

	seeds := nestedSeeds(150)
	sm, diags := asl.Parse([]byte(seeds[0]))
	require.Empty(t, diags)
	require.NotNil(t, sm)

	sm, diags = asl.Parse([]byte(seeds[1]))
	require.Empty(t, diags)
	require.NotNil(t, sm)

	for _, s := range seeds[2:] {
		sm, diags = asl.Parse([]byte(s))
		require.Nil(t, sm)
		require.Len(t, diags, 1)
		require.Equal(t, asl.CodeInvalidJSON, diags[0].Code)
		require.Contains(t, diags[0].Message, "Document nesting depth (1001) exceeds the maximum allowed (1000")
	}
}
