package interp_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

func TestJSONataTaskDataFlow(t *testing.T) {
	t.Parallel()
	def := `{"QueryLanguage": "JSONata", "StartAt": "T", "States": {
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
			"Arguments": {"qty": "{% $states.input.qty %}", "id": "{% $states.context.Execution.Name %}"},
			"TimeoutSeconds": "{% $states.input.qty * 10 %}",
			"Assign": {"total": "{% $states.result.price * $states.input.qty %}", "before": "{% $count %}"},
			"Output": {"price": "{% $states.result.price %}"},
			"Next": "P"},
		"P": {"Type": "Pass", "Output": "{% {'total': $total, 'price': $states.input.price} %}", "End": true}}}`
	b := setup(t, def, `{"qty": 3}`, interp.Options{})
	tasks := b.only(t, interp.RunTask)
	require.Len(t, tasks, 1)
	require.Equal(t, `{"qty":3,"id":"`+benchInfo.Name+`"}`, jsonvalue.String(tasks[0].Task.Parameters))
	require.Equal(t, int64(30), tasks[0].Task.TimeoutSeconds)
	timers := b.only(t, interp.StartTimer)
	require.Len(t, timers, 1)
	require.Equal(t, b.now.Add(30e9), timers[0].At)
	out, err := jsonvalue.ParseString(`{"price": 2.5}`)
	require.NoError(t, err)
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: tasks[0].ID, Output: out})
	require.Equal(t, history.StatusSucceeded, b.x.Status)
	require.Equal(t, `{"total":7.5,"price":2.5}`, jsonvalue.String(b.x.Output))
}

func TestJSONataCatchErrorOutput(t *testing.T) {
	t.Parallel()
	def := `{"QueryLanguage": "JSONata", "StartAt": "T", "States": {
		"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
			"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "F",
				"Assign": {"err": "{% $states.errorOutput.Error %}"},
				"Output": {"in": "{% $states.input %}", "cause": "{% $states.errorOutput.Cause %}"}}],
			"End": true},
		"F": {"Type": "Fail", "Error": "{% $err & '.Handled' %}", "Cause": "{% $states.input.cause %}"}}}`
	b := setup(t, def, `{"k": 1}`, interp.Options{})
	tasks := b.only(t, interp.RunTask)
	b.step(t, interp.Event{Kind: interp.TaskFailed, ID: tasks[0].ID, Error: "Boom", Cause: "it broke"})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, "Boom.Handled", b.x.Failure.Name)
	require.Equal(t, "it broke", b.x.Failure.Cause)
}

func TestJSONataMapAndChoice(t *testing.T) {
	t.Parallel()
	def := `{"QueryLanguage": "JSONata", "StartAt": "M", "States": {
		"M": {"Type": "Map", "Items": "{% $states.input.nums %}", "MaxConcurrency": "{% 2 %}",
			"ItemSelector": {"n": "{% $states.context.Map.Item.Value %}", "i": "{% $states.context.Map.Item.Index %}", "k": "{% $states.input.k %}"},
			"ItemProcessor": {"StartAt": "C", "States": {
				"C": {"Type": "Choice", "Choices": [{"Condition": "{% $states.input.n > 1 %}", "Next": "Big", "Output": {"big": "{% $states.input.n * $states.input.k %}"}}],
					"Default": "Small", "Output": {"small": "{% $states.input.i %}"}},
				"Big": {"Type": "Succeed"},
				"Small": {"Type": "Succeed"}}},
			"End": true}}}`
	b := setup(t, def, `{"nums": [1, 2, 3], "k": 10}`, interp.Options{})
	require.Equal(t, history.StatusSucceeded, b.x.Status)
	require.Equal(t, `[{"small":0},{"big":20},{"big":30}]`, jsonvalue.String(b.x.Output))

	b = setup(t, strings.Replace(def, `"{% $states.input.n > 1 %}"`, `"{% $states.input.n %}"`, 1), `{"nums": [1], "k": 10}`, interp.Options{})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, failure.QueryEvaluationError, b.x.Failure.Name)
	require.Contains(t, b.x.Failure.Cause, "The JSONata expression '$states.input.n' specified for the field 'Condition' returned an unexpected result type. Expected 'boolean', but was 'number' for value: 1")
}

func TestJSONataWaitSeconds(t *testing.T) {
	t.Parallel()
	def := `{"QueryLanguage": "JSONata", "StartAt": "W", "States": {
		"W": {"Type": "Wait", "Seconds": "{% $states.input.s %}", "End": true}}}`
	b := setup(t, def, `{"s": 5}`, interp.Options{})
	timers := b.only(t, interp.StartTimer)
	require.Len(t, timers, 1)
	require.Equal(t, b.now.Add(5e9), timers[0].At)

	b = setup(t, def, `{"s": -1}`, interp.Options{})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, failure.QueryEvaluationError, b.x.Failure.Name)
	require.Contains(t, b.x.Failure.Cause, "'Seconds'")
}

func TestVariableLimits(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 200*1024)
	for _, tc := range []struct {
		name, def, want string
	}{
		{"one variable", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Assign": {"v.$": "States.Format('{}{}', $.s, $.s)"}, "End": true}}}`,
			"The value of the variable 'v' exceeds the maximum size of 262144 bytes."},
		{"one Assign", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Assign": {"a.$": "$.s", "b.$": "$.s"}, "End": true}}}`,
			"The variables assigned by the state exceed the maximum combined size of 262144 bytes."},
		{"the execution", `{"StartAt": "A", "States": {
			"A": {"Type": "Pass", "Assign": {"n": 0}, "Next": "L"},
			"L": {"Type": "Pass", "Assign": {"v.$": "States.Format('v{}', $n)", "n.$": "States.MathAdd($n, 1)"}, "Next": "S"},
			"S": {"Type": "Pass", "Assign": {"x.$": "$.s"}, "Next": "L2"},
			"L2": {"Type": "Choice", "Choices": [{"Variable": "$n", "NumericLessThan": 100, "Next": "Keep"}], "Default": "Done"},
			"Keep": {"Type": "Pass", "Assign": {"k.$": "States.Format('{}{}', $n, $.s)"}, "Next": "Next"},
			"Next": {"Type": "Pass", "Next": "Done"},
			"Done": {"Type": "Succeed"}}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.def, `{"s": "`+big+`"}`, interp.Options{})
			if tc.want == "" {
				require.Equal(t, history.StatusSucceeded, b.x.Status, "within the limits")
				return
			}
			require.Equal(t, history.StatusFailed, b.x.Status)
			require.Equal(t, failure.DataLimitExceeded, b.x.Failure.Name)
			require.Contains(t, b.x.Failure.Cause, tc.want)
		})
	}
}

func TestExecutionVariableTotal(t *testing.T) {
	t.Parallel()
	// Each state assigns a new 200 KiB variable: the 52nd passes 10 MiB.
	var states []string
	for i := range 60 {
		next := `"Next": "S` + itoa(i+1) + `"`
		if i == 59 {
			next = `"End": true`
		}
		states = append(states, `"S`+itoa(i)+`": {"Type": "Pass", "Assign": {"v`+itoa(i)+`.$": "$.s"}, `+next+`}`)
	}
	def := `{"StartAt": "S0", "States": {` + strings.Join(states, ",") + `}}`
	b := setup(t, def, `{"s": "`+strings.Repeat("x", 200*1024)+`"}`, interp.Options{})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, failure.DataLimitExceeded, b.x.Failure.Name)
	require.Contains(t, b.x.Failure.Cause, "The state 'S51' cannot assign its variables: The variables of the execution would exceed the maximum total size of 10485760 bytes.")
}

func itoa(i int) string { return string(jsonvalue.NumberFromInt(int64(i))) }

func TestJSONataParallelArgumentsFailure(t *testing.T) {
	t.Parallel()
	def := `{"QueryLanguage": "JSONata", "StartAt": "P", "States": {
		"P": {"Type": "Parallel", "Arguments": {"x": "{% $nothing %}"}, "End": true,
			"Branches": [{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}]}}}`
	b := setup(t, def, `{}`, interp.Options{})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, []string{"ExecutionStarted", "ParallelStateEntered", "EvaluationFailed", "ParallelStateFailed", "ExecutionFailed"}, b.types())
	require.Equal(t, "Arguments/x", b.events[2].EvaluationFailedEventDetails.Location)
	require.Equal(t, int64(0), b.events[2].PreviousEventID, "linked before the entered event, as AWS links it")
}
