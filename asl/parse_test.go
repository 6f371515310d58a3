package asl_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
	"stepwise/asl/payload"
	"stepwise/jsonvalue"
)

type parseBundle struct {
	sm *asl.StateMachine
}

// setup parses def, which must be valid.
func setup(t *testing.T, def string) *parseBundle {
	t.Helper()
	sm, diags := asl.Parse([]byte(def))
	require.Empty(t, diags)
	require.NotNil(t, sm)
	return &parseBundle{sm: sm}
}

func countExprs(tmpl *payload.Template) int {
	n := 0
	tmpl.Exprs(func(*payload.Expr) { n++ })
	return n
}

func TestParse_machine(t *testing.T) {
	t.Parallel()

	b := setup(t, `{
	  "Comment": "c", "Version": "1.0", "TimeoutSeconds": 30,
	  "StartAt": "B",
	  "States": {
	    "B": {"Type": "Pass", "Next": "A"},
	    "A": {"Type": "Succeed", "Comment": "done"}
	  }
	}`)
	require.Equal(t, "c", b.sm.Comment)
	require.Equal(t, "1.0", b.sm.Version)
	require.Equal(t, int64(30), *b.sm.TimeoutSeconds)
	require.Equal(t, "B", b.sm.StartAt)
	require.Equal(t, []string{"B", "A"}, b.sm.Order)
	require.Equal(t, asl.JSONPath, b.sm.QueryLanguage)
	require.Equal(t, asl.TypePass, b.sm.States["B"].Type)
	require.Equal(t, "B", b.sm.States["B"].Name)
	require.Equal(t, "A", b.sm.States["B"].Next)
	require.Equal(t, asl.JSONPath, b.sm.States["B"].QueryLanguage)
	require.Equal(t, "done", b.sm.States["A"].Comment)
}

func TestParse_pass(t *testing.T) {
	t.Parallel()

	b := setup(t, machine(`"A": {
	  "Type": "Pass", "InputPath": null, "OutputPath": "$.out", "ResultPath": "$.r",
	  "Parameters": {"x.$": "$.a", "lit": {"y": 1}, "z.$": "$$.Execution.Id"},
	  "Result": {"k": [1, 2]},
	  "Assign": {"v.$": "$.a", "w": 2},
	  "End": true
	}`))
	st := b.sm.States["A"]
	require.True(t, st.End)
	require.Equal(t, &asl.PathField{Null: true}, st.InputPath)
	require.Equal(t, "$.out", st.OutputPath.Path.String())
	require.False(t, st.OutputPath.Null)
	require.Equal(t, "$.r", st.ResultPath.Path.String())
	require.Equal(t, 2, countExprs(st.Parameters))
	require.True(t, st.HasResult)
	require.Equal(t, `{"k":[1,2]}`, jsonvalue.String(st.Result))
	require.Equal(t, 1, countExprs(st.Assign))
	require.Nil(t, st.AssignRaw)
	require.Nil(t, st.ResultSelector)
}

func TestParse_task(t *testing.T) {
	t.Parallel()

	b := setup(t, machine(`"A": {
	  "Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
	  "TimeoutSeconds": 60, "HeartbeatSecondsPath": "$.hb",
	  "ResultSelector": {"p.$": "$.Payload"},
	  "Credentials": {"RoleArn": "arn:aws:iam::111111111111:role/r"},
	  "Retry": [{"ErrorEquals": ["States.Timeout"]}, {"ErrorEquals": ["States.ALL"], "IntervalSeconds": 3, "MaxAttempts": 0, "BackoffRate": 1.5, "MaxDelaySeconds": 10, "JitterStrategy": "FULL", "Comment": "r"}],
	  "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.err", "Next": "B", "Comment": "c"}],
	  "Next": "B"
	}, "B": {"Type": "Succeed"}`))
	st := b.sm.States["A"]
	require.Equal(t, "arn:aws:states:::lambda:invoke", st.Resource)
	require.Equal(t, int64(60), *st.Timeout.Value)
	require.Equal(t, "$.hb", st.Heartbeat.Path.String())
	require.Nil(t, st.Heartbeat.Value)
	require.Equal(t, 1, countExprs(st.ResultSelector))
	require.NotNil(t, st.Credentials)
	require.Equal(t, []*asl.Retrier{
		{ErrorEquals: []string{"States.Timeout"}, IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2.0, JitterStrategy: "NONE"},
		{ErrorEquals: []string{"States.ALL"}, IntervalSeconds: 3, MaxAttempts: 0, BackoffRate: 1.5, MaxDelaySeconds: ptr(int64(10)), JitterStrategy: "FULL", Comment: "r"},
	}, st.Retry)
	require.Len(t, st.Catch, 1)
	require.Equal(t, []string{"States.ALL"}, st.Catch[0].ErrorEquals)
	require.Equal(t, "$.err", st.Catch[0].ResultPath.Path.String())
	require.Equal(t, "B", st.Catch[0].Next)
	require.Equal(t, "c", st.Catch[0].Comment)
}

func ptr[T any](v T) *T { return &v }

func TestParse_wait(t *testing.T) {
	t.Parallel()

	b := setup(t, machine(`
	  "A": {"Type": "Wait", "Seconds": 5, "Next": "B"},
	  "B": {"Type": "Wait", "Timestamp": "2016-03-14T01:59:00.5+02:00", "Next": "C"},
	  "C": {"Type": "Wait", "SecondsPath": "$.s", "Next": "D"},
	  "D": {"Type": "Wait", "TimestampPath": "$.t", "Next": "E"},
	  "E": {"Type": "Wait", "QueryLanguage": "JSONata", "Seconds": "{% $states.input.s %}", "Next": "F"},
	  "F": {"Type": "Wait", "QueryLanguage": "JSONata", "Timestamp": "2016-03-14T01:59:00Z", "End": true}`))
	require.Equal(t, int64(5), *b.sm.States["A"].Seconds)

	st := b.sm.States["B"]
	want := time.Date(2016, 3, 13, 23, 59, 0, 500_000_000, time.UTC)
	require.True(t, want.Equal(*st.Timestamp))
	require.Equal(t, "2016-03-14T01:59:00.5+02:00", st.TimestampText)

	require.Equal(t, "$.s", b.sm.States["C"].SecondsPath.String())
	require.Equal(t, "$.t", b.sm.States["D"].TimestampPath.String())

	st = b.sm.States["E"]
	require.Equal(t, asl.JSONata, st.QueryLanguage)
	require.Equal(t, "{% $states.input.s %}", st.WaitExpr)
	require.Equal(t, "Seconds", st.WaitExprField)
	require.Nil(t, st.Seconds)

	st = b.sm.States["F"]
	require.Empty(t, st.WaitExpr)
	require.Equal(t, "2016-03-14T01:59:00Z", st.TimestampText)
}

func TestParse_timestamps(t *testing.T) {
	t.Parallel()

	for _, ts := range []string{"2016-03-14T01:59:00Z", "2016-03-14T01:59:00.123456789Z", "2016-03-14T01:59:00-05:30"} {
		_, diags := asl.Parse([]byte(machine(`"A": {"Type": "Wait", "Timestamp": "` + ts + `", "End": true}`)))
		require.Empty(t, diags, ts)
	}
	for _, ts := range []string{
		"2016-13-05T21:29:29Z", "05-12-2016T21:29:29Z", "2016-12-05T25:29:29Z", "2016-12-05 21:29:29Z",
		"2016-12-05t21:29:29z", "2016-12-05T21:29:29", "2016-02-30T00:00:00Z", "2016-12-05T21:29:29.Z",
	} {
		require.Equal(t,
			[]asl.Diagnostic{schemaDiag("String does not match RFC3339 timestamp", "/States/A/Timestamp")},
			asl.Validate([]byte(machine(`"A": {"Type": "Wait", "Timestamp": "`+ts+`", "End": true}`)), asl.Options{}),
			ts)
	}
}

func TestParse_choice(t *testing.T) {
	t.Parallel()

	b := setup(t, machine(`"A": {
	  "Type": "Choice",
	  "Choices": [
	    {"Variable": "$.n", "NumericGreaterThanEquals": 1.50, "Next": "B", "Assign": {"x": 1}},
	    {"And": [
	      {"Variable": "$.s", "StringMatches": "log-*.txt"},
	      {"Not": {"Variable": "$$.Execution.Id", "IsNull": true}},
	      {"Variable": "$.t", "TimestampLessThanPath": "$.limit"}
	    ], "Next": "B", "Comment": "both"}
	  ],
	  "Default": "B"
	}, "B": {"Type": "Succeed"}`))
	st := b.sm.States["A"]
	require.Equal(t, "B", st.Default)
	require.Len(t, st.Choices, 2)

	r := st.Choices[0]
	require.Equal(t, "$.n", r.Variable.String())
	require.Equal(t, "NumericGreaterThanEquals", r.Operator)
	require.Equal(t, jsonvalue.Number("1.50"), r.Operand)
	require.Equal(t, "B", r.Next)
	require.NotNil(t, r.Assign)

	r = st.Choices[1]
	require.Equal(t, "both", r.Comment)
	require.Len(t, r.And, 3)
	require.Equal(t, "StringMatches", r.And[0].Operator)
	require.Equal(t, "log-*.txt", r.And[0].Operand)
	require.Equal(t, "IsNull", r.And[1].Not.Operator)
	require.Equal(t, true, r.And[1].Not.Operand)
	require.Equal(t, "TimestampLessThanPath", r.And[2].Operator)
	require.Equal(t, "$.limit", r.And[2].OperandPath.String())
	require.Nil(t, r.And[2].Operand)
}

func TestParse_map(t *testing.T) {
	t.Parallel()

	b := setup(t, machine(`
	  "A": {
	    "Type": "Map", "ItemsPath": "$.items", "MaxConcurrency": 2,
	    "Parameters": {"item.$": "$$.Map.Item.Value"},
	    "Iterator": {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}},
	    "ToleratedFailurePercentage": 0.5,
	    "Next": "B"
	  },
	  "B": {
	    "Type": "Map", "MaxConcurrencyPath": "$.max", "ToleratedFailureCount": 3,
	    "ItemProcessor": {
	      "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "EXPRESS"},
	      "StartAt": "Q", "States": {"Q": {"Type": "Pass", "End": true}}
	    },
	    "ItemReader": {"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": {"InputType": "CSV", "CSVHeaderLocation": "FIRST_ROW"}, "Parameters": {"Bucket": "b", "Key": "k"}},
	    "ItemBatcher": {"MaxItemsPerBatch": 10},
	    "ResultWriter": {"Resource": "arn:aws:states:::s3:putObject", "Parameters": {"Bucket": "b", "Prefix": "p"}},
	    "ToleratedFailurePercentage": 50,
	    "Label": "L",
	    "End": true
	  }`))
	st := b.sm.States["A"]
	require.Equal(t, "$.items", st.ItemsPath.String())
	require.Equal(t, int64(2), *st.MaxConcurrency.Value)
	require.Equal(t, 1, countExprs(st.ItemSelector))
	require.Equal(t, "INLINE", st.ProcessorMode)
	require.Equal(t, "P", st.ItemProcessor.StartAt)
	require.Nil(t, st.TolerancePercent.Value)
	require.Equal(t, 0.5, *st.TolerancePercent.Number)

	st = b.sm.States["B"]
	require.Equal(t, "$.max", st.MaxConcurrency.Path.String())
	require.Equal(t, int64(3), *st.ToleratedCount.Value)
	require.Equal(t, "DISTRIBUTED", st.ProcessorMode)
	require.Equal(t, "EXPRESS", st.ExecutionType)
	require.Equal(t, "Q", st.ItemProcessor.StartAt)
	require.Equal(t, asl.JSONPath, st.ItemProcessor.QueryLanguage)
	require.NotNil(t, st.ItemReader)
	require.NotNil(t, st.ItemBatcher)
	require.NotNil(t, st.ResultWriter)
	require.Equal(t, int64(50), *st.TolerancePercent.Value)
	require.Equal(t, "L", st.Label)
}

func TestParse_parallel(t *testing.T) {
	t.Parallel()

	b := setup(t, machine(`"A": {
	  "Type": "Parallel",
	  "Branches": [
	    {"StartAt": "B1", "States": {"B1": {"Type": "Pass", "End": true}}},
	    {"StartAt": "B2", "Comment": "second", "States": {"B2": {"Type": "Succeed"}}}
	  ],
	  "ResultSelector": {"first.$": "$[0]"},
	  "End": true
	}`))
	st := b.sm.States["A"]
	require.Len(t, st.Branches, 2)
	require.Equal(t, "B1", st.Branches[0].StartAt)
	require.Equal(t, "second", st.Branches[1].Comment)
	require.Equal(t, []string{"B2"}, st.Branches[1].Order)
	require.Equal(t, 1, countExprs(st.ResultSelector))
}

func TestParse_fail(t *testing.T) {
	t.Parallel()

	b := setup(t, machine(`
	  "A": {"Type": "Pass", "Next": "F"},
	  "F": {"Type": "Fail", "ErrorPath": "$.error", "Cause": "because"}`))
	st := b.sm.States["F"]
	require.Equal(t, "$.error", st.ErrorPath.Text)
	require.NotNil(t, st.ErrorPath.Path)
	require.True(t, st.HasCause)
	require.Equal(t, "because", st.Cause)
	require.False(t, st.HasError)
	require.Nil(t, st.CausePath)
}

func TestParse_jsonata(t *testing.T) {
	t.Parallel()

	b := setup(t, `{
	  "QueryLanguage": "JSONata",
	  "StartAt": "T",
	  "States": {
	    "T": {
	      "Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
	      "Arguments": {"FunctionName": "f", "Payload": "{% $states.input %}"},
	      "TimeoutSeconds": "{% $t %}", "HeartbeatSeconds": 5,
	      "Output": "{% $states.result.Payload %}",
	      "Assign": {"x": "{% $states.result %}"},
	      "Catch": [{"ErrorEquals": ["States.ALL"], "Output": "{% $states.errorOutput %}", "Assign": {"e": 1}, "Next": "C"}],
	      "Next": "C"
	    },
	    "C": {
	      "Type": "Choice",
	      "Choices": [{"Condition": "{% $x > 1 %}", "Next": "M", "Output": 1, "Assign": {"y": 2}}, {"Condition": true, "Next": "M"}],
	      "Default": "M"
	    },
	    "M": {
	      "Type": "Map", "Items": "{% [1, 2] %}", "ItemSelector": {"v": "{% $states.context.Map.Item.Value %}"},
	      "MaxConcurrency": "{% $max %}", "ToleratedFailurePercentage": "{% 10 %}",
	      "ItemProcessor": {"StartAt": "P", "States": {"P": {"Type": "Pass", "Output": "{% $states.input * 2 %}", "End": true}}},
	      "Next": "F"
	    },
	    "F": {"Type": "Fail", "Error": "{% 'E' %}", "Cause": "plain"}
	  }
	}`)
	require.Equal(t, asl.JSONata, b.sm.QueryLanguage)

	st := b.sm.States["T"]
	require.Equal(t, asl.JSONata, st.QueryLanguage)
	require.NotNil(t, st.Arguments)
	require.Equal(t, "{% $t %}", st.Timeout.Expr)
	require.Equal(t, int64(5), *st.Heartbeat.Value)
	require.True(t, st.HasOutput)
	require.Equal(t, "{% $states.result.Payload %}", st.Output)
	require.Nil(t, st.Assign)
	require.NotNil(t, st.AssignRaw)
	require.True(t, st.Catch[0].HasOutput)
	require.NotNil(t, st.Catch[0].AssignRaw)

	st = b.sm.States["C"]
	require.Equal(t, "{% $x > 1 %}", st.Choices[0].Condition)
	require.True(t, st.Choices[0].HasOutput)
	require.NotNil(t, st.Choices[0].AssignRaw)
	require.Equal(t, "{% true %}", st.Choices[1].Condition)

	st = b.sm.States["M"]
	require.Equal(t, "{% [1, 2] %}", st.Items)
	require.NotNil(t, st.ItemSelectorRaw)
	require.Nil(t, st.ItemSelector)
	require.Equal(t, "{% $max %}", st.MaxConcurrency.Expr)
	require.Equal(t, "{% 10 %}", st.TolerancePercent.Expr)
	require.Equal(t, asl.JSONata, st.ItemProcessor.QueryLanguage)
	require.Equal(t, asl.JSONata, st.ItemProcessor.States["P"].QueryLanguage)

	st = b.sm.States["F"]
	require.Equal(t, "{% 'E' %}", st.Error)
	require.Equal(t, "plain", st.Cause)
}

func TestParse_mixedLanguages(t *testing.T) {
	t.Parallel()

	// A state may opt in to JSONata in a JSONPath machine; the states inside
	// a Map or Parallel use the machine's language unless they declare one.
	b := setup(t, `{
	  "StartAt": "M",
	  "States": {
	    "M": {
	      "Type": "Map", "QueryLanguage": "JSONata", "Items": [1, 2],
	      "ItemProcessor": {"StartAt": "P", "States": {
	        "P": {"Type": "Pass", "Parameters": {"v.$": "$"}, "Next": "Q"},
	        "Q": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% $states.input %}", "End": true}
	      }},
	      "End": true
	    }
	  }
	}`)
	st := b.sm.States["M"]
	require.Equal(t, asl.JSONata, st.QueryLanguage)
	require.Equal(t, []any{jsonvalue.Number("1"), jsonvalue.Number("2")}, st.Items)
	require.Equal(t, asl.JSONPath, st.ItemProcessor.QueryLanguage)
	require.Equal(t, asl.JSONPath, st.ItemProcessor.States["P"].QueryLanguage)
	require.Equal(t, asl.JSONata, st.ItemProcessor.States["Q"].QueryLanguage)
}

func TestParse_errorsReturnNoMachine(t *testing.T) {
	t.Parallel()

	sm, diags := asl.ParseWith([]byte(`{}`), asl.Options{Type: asl.TypeExpress})
	require.Nil(t, sm)
	require.Equal(t, []asl.Diagnostic{schemaDiag("These fields are required: [States, StartAt]", "/")}, diags)
	require.True(t, asl.HasErrors(diags))
	require.Equal(t, "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: These fields are required: [States, StartAt] at /'",
		asl.InvalidDefinitionMessage(diags))
}
