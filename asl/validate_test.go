package asl_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
)

func schemaDiag(msg, loc string) asl.Diagnostic {
	return asl.Diagnostic{Severity: asl.SeverityError, Code: asl.CodeSchemaValidationFailed, Message: msg, Location: loc}
}

func targetDiag(msg, loc string) asl.Diagnostic {
	return asl.Diagnostic{Severity: asl.SeverityError, Code: asl.CodeMissingTransitionTarget, Message: msg, Location: loc}
}

// machine wraps states (the inside of "States") in a machine starting at A.
func machine(states string) string {
	return `{"StartAt": "A", "States": {` + states + `}}`
}

// The nested while loop: an outer loop over batches and an inner loop over
// users, where one Choice names a state that was never written.
const nestedWhileLoop = `{
  "Comment": "Nested while loop",
  "StartAt": "InitOuter",
  "States": {
    "InitOuter": {"Type": "Pass", "Result": {"batch": 0}, "ResultPath": "$.outer", "Next": "IsBatchCountReached"},
    "IsBatchCountReached": {
      "Type": "Choice",
      "Choices": [{"Variable": "$.outer.batch", "NumericGreaterThanEquals": 3, "Next": "Done"}],
      "Default": "InitInner"
    },
    "InitInner": {"Type": "Pass", "Result": {"count": 0}, "ResultPath": "$.inner", "Next": "IsNotificationUserCountReached"},
    "IsNotificationUserCountReached": {
      "Type": "Choice",
      "Choices": [
        {"Variable": "$.inner.count", "NumericGreaterThanEquals": 10, "Next": "NotifyOverflow"},
        {"Variable": "$.inner.count", "NumericLessThan": 10, "Next": "NotifyUser"}
      ],
      "Default": "IncrementOuter"
    },
    "NotifyUser": {
      "Type": "Task",
      "Resource": "arn:aws:states:::lambda:invoke",
      "Parameters": {"FunctionName": "notify", "Payload.$": "$"},
      "ResultPath": null,
      "Next": "IncrementInner"
    },
    "IncrementInner": {"Type": "Pass", "Parameters": {"count.$": "$.inner.count"}, "ResultPath": "$.inner", "Next": "IsNotificationUserCountReached"},
    "IncrementOuter": {"Type": "Pass", "Parameters": {"batch.$": "$.outer.batch"}, "ResultPath": "$.outer", "Next": "IsBatchCountReached"},
    "Done": {"Type": "Succeed"}
  }
}`

func TestParse_nestedWhileLoopWithDanglingNext(t *testing.T) {
	t.Parallel()

	sm, diags := asl.Parse([]byte(nestedWhileLoop))
	require.Nil(t, sm)
	require.Equal(t, []asl.Diagnostic{
		targetDiag("Missing 'Next' target: NotifyOverflow", "/States/IsNotificationUserCountReached/Choices[0]/Next"),
	}, diags)

	fixed := strings.Replace(nestedWhileLoop, `"Next": "NotifyOverflow"`, `"Next": "Done"`, 1)
	sm, diags = asl.Parse([]byte(fixed))
	require.Empty(t, diags)
	require.NotNil(t, sm)
}

func TestParse_startAtCaseMismatch(t *testing.T) {
	t.Parallel()

	def := `{
	  "StartAt": "Parallel",
	  "States": {
	    "parallel": {
	      "Type": "Parallel",
	      "Branches": [{"StartAt": "B", "States": {"B": {"Type": "Pass", "End": true}}}],
	      "End": true
	    }
	  }
	}`
	sm, diags := asl.Parse([]byte(def))
	require.Nil(t, sm)
	require.Equal(t, []asl.Diagnostic{
		targetDiag("Missing 'Next' target: Parallel", "/StartAt"),
		targetDiag(`State "parallel" is not reachable.`, "/States/parallel"),
	}, diags)
	require.Equal(t,
		`Invalid State Machine Definition: 'MISSING_TRANSITION_TARGET: Missing 'Next' target: Parallel at /StartAt, `+
			`MISSING_TRANSITION_TARGET: State "parallel" is not reachable. at /States/parallel'`,
		asl.InvalidDefinitionMessage(diags))
}

func TestValidate(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		def  string
		opts asl.Options
		want []asl.Diagnostic
	}{
		{
			name: "Valid",
			def:  machine(`"A": {"Type": "Pass", "End": true}`),
		},
		{
			name: "BlankDefinition",
			def:  " \n",
			want: []asl.Diagnostic{schemaDiag("Definition must be a valid JSON object", "")},
		},
		{
			name: "NotAnObject",
			def:  `[1, 2]`,
			want: []asl.Diagnostic{schemaDiag("Definition must be a valid JSON object", "")},
		},
		{
			name: "MissingRequired",
			def:  `{"Comment": "x"}`,
			want: []asl.Diagnostic{schemaDiag("These fields are required: [States, StartAt]", "/")},
		},
		{
			name: "UnknownTopLevelField",
			def:  `{"StartAt": "A", "Coment": "typo", "States": {"A": {"Type": "Pass", "End": true}}}`,
			want: []asl.Diagnostic{schemaDiag("Field 'Coment' is not supported", "/")},
		},
		{
			name: "MistypedFields",
			def:  `{"StartAt": 1, "States": []}`,
			want: []asl.Diagnostic{
				schemaDiag("Expected value of type [STRING]", "/StartAt"),
				schemaDiag("Expected value of type [OBJECT]", "/States"),
			},
		},
		{
			name: "TopLevelQueryLanguage",
			def:  `{"QueryLanguage": "jsonata", "StartAt": "A", "States": {"A": {"Type": "Pass", "InputPath": "$.a", "End": true}}}`,
			want: []asl.Diagnostic{
				schemaDiag("Value should be one of the following: [JSONPath, JSONata]", "/QueryLanguage"),
				schemaDiag("The QueryLanguage is set to 'JSONata', but field 'InputPath' is only supported for the 'JSONPath' QueryLanguage", "/States/A"),
			},
		},
		{
			name: "UnknownStateType",
			def:  machine(`"A": {"Type": "Paas", "End": true}`),
			want: []asl.Diagnostic{schemaDiag("The field 'Type' should have one of these values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map]", "/States/A/Type")},
		},
		{
			name: "MissingType",
			def:  machine(`"A": {"End": true}`),
			want: []asl.Diagnostic{schemaDiag("These fields are required: [Type]", "/States/A")},
		},
		{
			name: "StateNotAnObject",
			def:  machine(`"A": {"Type": "Pass", "Next": "B"}, "B": 3`),
			want: []asl.Diagnostic{
				schemaDiag("Expected value of type [OBJECT]", "/States/B"),
				{Severity: asl.SeverityError, Code: asl.CodeMissingEndState, Message: "Workflow has no terminal state"},
			},
		},
		{
			name: "FieldNotSupportedForType",
			def:  machine(`"A": {"Type": "Pass", "TimeoutSeconds": 5, "Catch": [], "End": true}`),
			want: []asl.Diagnostic{
				schemaDiag("Field 'TimeoutSeconds' is not supported", "/States/A"),
				schemaDiag("Field 'Catch' is not supported", "/States/A"),
			},
		},
		{
			name: "NextAndEnd",
			def:  machine(`"A": {"Type": "Pass", "Next": "B", "End": true}, "B": {"Type": "Succeed"}`),
			want: []asl.Diagnostic{schemaDiag("These fields cannot be specified together: [Next, End]", "/States/A")},
		},
		{
			name: "NeitherNextNorEnd",
			def:  machine(`"A": {"Type": "Pass", "Next": "B"}, "B": {"Type": "Wait", "Seconds": 1, "End": false}, "C": {"Type": "Succeed"}`),
			want: []asl.Diagnostic{
				schemaDiag("Exactly one of these fields is required: [Next, End]", "/States/B"),
				targetDiag(`State "C" is not reachable.`, "/States/C"),
			},
		},
		{
			name: "MissingTargets",
			def: machine(`"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Next": "Ghost",
				"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Ghost2"}]},
				"C": {"Type": "Choice", "Choices": [{"Variable": "$.x", "IsPresent": true, "Next": "Ghost3"}], "Default": "Ghost4"},
				"Z": {"Type": "Succeed"}`),
			want: []asl.Diagnostic{
				targetDiag("Missing 'Next' target: Ghost", "/States/A/Next"),
				targetDiag("Missing 'Next' target: Ghost2", "/States/A/Catch[0]/Next"),
				targetDiag("Missing 'Next' target: Ghost4", "/States/C/Default"),
				targetDiag("Missing 'Next' target: Ghost3", "/States/C/Choices[0]/Next"),
				targetDiag(`State "C" is not reachable.`, "/States/C"),
				targetDiag(`State "Z" is not reachable.`, "/States/Z"),
			},
		},
		{
			name: "NoTerminalState",
			def:  machine(`"A": {"Type": "Pass", "Next": "B"}, "B": {"Type": "Pass", "Next": "A"}, "Unused": {"Type": "Pass", "Next": "A"}`),
			want: []asl.Diagnostic{{Severity: asl.SeverityError, Code: asl.CodeMissingEndState, Message: "Workflow has no terminal state"}},
		},
		{
			name: "UnreachableCycle",
			def:  machine(`"A": {"Type": "Succeed"}, "B": {"Type": "Pass", "Next": "C"}, "C": {"Type": "Pass", "Next": "B"}`),
			want: []asl.Diagnostic{
				targetDiag(`State "B" is not reachable.`, "/States/B"),
				targetDiag(`State "C" is not reachable.`, "/States/C"),
			},
		},
		{
			name: "BranchIsSelfContained",
			def: machine(`"A": {"Type": "Parallel", "Branches": [{"StartAt": "B1", "States": {
				"B1": {"Type": "Pass", "Next": "Done"}, "Ghost": {"Type": "Pass", "End": true}}}], "Next": "Done"},
				"Done": {"Type": "Succeed"}`),
			want: []asl.Diagnostic{
				targetDiag("Missing 'Next' target: Done", "/States/A/Branches[0]/States/B1/Next"),
				targetDiag(`State "Ghost" is not reachable.`, "/States/A/Branches[0]/States/Ghost"),
			},
		},
		{
			name: "IteratorIsSelfContained",
			def: machine(`"A": {"Type": "Map", "ItemProcessor": {"StartAt": "Nope", "States": {
				"P": {"Type": "Pass", "Next": "A"}}}, "End": true}`),
			want: []asl.Diagnostic{
				targetDiag("Missing 'Next' target: Nope", "/States/A/ItemProcessor/StartAt"),
				targetDiag("Missing 'Next' target: A", "/States/A/ItemProcessor/States/P/Next"),
				targetDiag(`State "P" is not reachable.`, "/States/A/ItemProcessor/States/P"),
			},
		},
		{
			name: "NestedLoopWithoutTerminalStateIsAccepted",
			def: machine(`"A": {"Type": "Map", "ItemProcessor": {"StartAt": "P", "States": {
				"P": {"Type": "Pass", "Next": "Q"}, "Q": {"Type": "Pass", "Next": "P"}}}, "End": true}`),
		},
		{
			name: "DuplicateStateNames",
			def: `{"StartAt": "A", "States": {"A": {"Type": "Parallel", "Branches": [{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}], "Next": "B"},
				"B": {"Type": "Pass", "End": true}, "B": {"Type": "Succeed"}}}`,
			want: []asl.Diagnostic{
				{Severity: asl.SeverityError, Code: asl.CodeDuplicateStateName, Message: "Duplicate State name: A", Location: "/States/A/Branches[0]/States/A"},
				{Severity: asl.SeverityError, Code: asl.CodeDuplicateStateName, Message: "Duplicate State name: B", Location: "/States/B"},
			},
		},
		{
			name: "StateNameTooLong",
			def:  `{"StartAt": "` + strings.Repeat("x", 81) + `", "States": {"` + strings.Repeat("x", 81) + `": {"Type": "Succeed"}}}`,
			want: []asl.Diagnostic{{
				Severity: asl.SeverityError, Code: asl.CodeInvalidStateName,
				Message:  "Invalid State name: State '" + strings.Repeat("x", 81) + "' exceeds the 80-character limit allowed by the service",
				Location: "/States/" + strings.Repeat("x", 81),
			}},
		},
		{
			name: "DollarKeyTwice",
			def:  machine(`"A": {"Type": "Pass", "Parameters": {"a": 1, "a.$": "$.a"}, "End": true}`),
			want: []asl.Diagnostic{schemaDiag("The fields 'a' and 'a.$' cannot both be specified", "/States/A/Parameters")},
		},
		{
			name: "BadDollarValue",
			def:  machine(`"A": {"Type": "Pass", "Assign": {"Variable.$": "Test"}, "Parameters": {"x": {"y.$": 3}}, "End": true}`),
			want: []asl.Diagnostic{
				schemaDiag("The value for the field 'Variable.$' must be a valid JSONPath or a valid intrinsic function call", "/States/A/Assign"),
				schemaDiag("The value for the field 'y.$' must be a valid JSONPath or a valid intrinsic function call", "/States/A/Parameters"),
			},
		},
		{
			name: "BadPaths",
			def: machine(`"A": {"Type": "Pass", "InputPath": "a.b", "ResultPath": "$$.Execution", "Next": "F"},
				"F": {"Type": "Fail", "ErrorPath": "nope"}`),
			want: []asl.Diagnostic{
				schemaDiag("The value for the field 'InputPath' must be a valid JSONPath", "/States/A/InputPath"),
				schemaDiag("The value for the field 'ResultPath' must be a valid JSONPath", "/States/A/ResultPath"),
				schemaDiag("The value for the field 'ErrorPath' must be a valid JSONPath or a valid intrinsic function call", "/States/F/ErrorPath"),
			},
		},
		{
			name: "WaitFields",
			def: machine(`"A": {"Type": "Wait", "Seconds": 5, "SecondsPath": "$.s", "Next": "B"},
				"B": {"Type": "Wait", "Next": "C"},
				"C": {"Type": "Wait", "Seconds": -1, "End": true}`),
			want: []asl.Diagnostic{
				schemaDiag("These fields cannot be specified together: [Seconds, SecondsPath]", "/States/A"),
				schemaDiag("Exactly one of these fields is required: [Seconds, Timestamp, SecondsPath, TimestampPath]", "/States/B"),
				schemaDiag("Minimum value is 0", "/States/C/Seconds"),
			},
		},
		{
			name: "WaitTimestamp",
			def:  `{"StartAt": "WaitUntil", "States": {"WaitUntil": {"Type": "Wait", "Timestamp": "2016-12-05 21:29:29Z", "End": true}}}`,
			want: []asl.Diagnostic{schemaDiag("String does not match RFC3339 timestamp", "/States/WaitUntil/Timestamp")},
		},
		{
			name: "ErrorEquals",
			def: machine(`"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true,
				"Retry": [{"ErrorEquals": ["States.ALL", "X"]}, {"ErrorEquals": ["States.ALL"]}, {"ErrorEquals": []}],
				"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "A"}, {"Next": "A"}]}`),
			want: []asl.Diagnostic{
				schemaDiag("States.ALL must appear alone in the ErrorEquals array", "/States/A/Retry[0]/ErrorEquals"),
				schemaDiag("The Retry element with States.ALL must be the last one", "/States/A/Retry[0]/ErrorEquals"),
				schemaDiag("The Retry element with States.ALL must be the last one", "/States/A/Retry[1]/ErrorEquals"),
				schemaDiag("The field 'ErrorEquals' must not be empty", "/States/A/Retry[2]/ErrorEquals"),
				schemaDiag("The Catch element with States.ALL must be the last one", "/States/A/Catch[0]/ErrorEquals"),
				schemaDiag("These fields are required: [ErrorEquals]", "/States/A/Catch[1]"),
			},
		},
		{
			name: "RetryRanges",
			def: machine(`"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true,
				"Retry": [{"ErrorEquals": ["X"], "MaxAttempts": -1, "BackoffRate": 0.5, "IntervalSeconds": 0, "MaxDelaySeconds": 0, "JitterStrategy": "SOME", "Foo": 1}]}`),
			want: []asl.Diagnostic{
				schemaDiag("Minimum value is 0", "/States/A/Retry[0]/MaxAttempts"),
				schemaDiag("Minimum value is 1.0", "/States/A/Retry[0]/BackoffRate"),
				schemaDiag("Minimum value is 1", "/States/A/Retry[0]/IntervalSeconds"),
				schemaDiag("Minimum value is 1", "/States/A/Retry[0]/MaxDelaySeconds"),
				schemaDiag("Value should be one of the following: [FULL, NONE]", "/States/A/Retry[0]/JitterStrategy"),
				schemaDiag("Field 'Foo' is not supported", "/States/A/Retry[0]"),
			},
		},
		{
			name: "TaskTimeouts",
			def: machine(`"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "TimeoutSeconds": 0, "Next": "B"},
				"B": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "TimeoutSeconds": 10, "HeartbeatSeconds": 10, "Next": "C"},
				"C": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "TimeoutSeconds": 10, "TimeoutSecondsPath": "$.t", "End": true}`),
			want: []asl.Diagnostic{
				schemaDiag("Minimum value is 1", "/States/A/TimeoutSeconds"),
				schemaDiag("The field 'HeartbeatSeconds' must be smaller than the field 'TimeoutSeconds'", "/States/B/HeartbeatSeconds"),
				schemaDiag("These fields cannot be specified together: [TimeoutSeconds, TimeoutSecondsPath]", "/States/C"),
			},
		},
		{
			name: "TaskResource",
			def:  machine(`"A": {"Type": "Task", "Next": "B"}, "B": {"Type": "Task", "Resource": "lambda", "End": true}`),
			want: []asl.Diagnostic{
				schemaDiag("These fields are required: [Resource]", "/States/A"),
				schemaDiag("The resource provided lambda is not recognized. The value is not a valid resource ARN, or the resource is not available in this region.", "/States/B/Resource"),
			},
		},
		{
			name: "ExpressIntegrations",
			opts: asl.Options{Type: asl.TypeExpress},
			def: machine(`"A": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken", "Next": "B"},
				"B": {"Type": "Parallel", "Branches": [{"StartAt": "C", "States": {"C": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2", "End": true}}}], "End": true}`),
			want: []asl.Diagnostic{
				schemaDiag("Express state machine does not support '.waitForTaskToken' service integration ", "/States/A/Resource"),
				schemaDiag("Express state machine does not support '.sync' service integration ", "/States/B/Branches[0]/States/C/Resource"),
			},
		},
		{
			name: "StandardAllowsCallbacks",
			def:  machine(`"A": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken", "End": true}`),
		},
		{
			name: "ChoiceRuleOperators",
			def: machine(`"A": {"Type": "Choice", "Default": "B", "Choices": [
				{"Variable": "$.x", "Next": "B"},
				{"Variable": "$.x", "StringEquals": "a", "NumericEquals": 1, "Next": "B"},
				{"StringEquals": "a", "Next": "B"},
				{"Not": {"Variable": "$.x", "IsNull": true, "Next": "B"}, "Next": "B"},
				{"Variable": "$.x", "IsNull": true}
			]}, "B": {"Type": "Succeed"}`),
			want: []asl.Diagnostic{
				schemaDiag("A Choice Rule must have exactly one of the fields [And, Or, Not] or a comparison operator with 'Variable'", "/States/A/Choices[0]"),
				schemaDiag("A Choice Rule may have only one comparison operator, found [StringEquals, NumericEquals]", "/States/A/Choices[1]"),
				schemaDiag("These fields are required: [Variable]", "/States/A/Choices[2]"),
				schemaDiag("Field 'Next' is not supported", "/States/A/Choices[3]/Not"),
				schemaDiag("These fields are required: [Next]", "/States/A/Choices[4]"),
			},
		},
		{
			name: "ChoiceOperandTypes",
			def: machine(`"A": {"Type": "Choice", "Default": "B", "Choices": [
				{"Variable": "$.x", "StringEquals": 1, "Next": "B"},
				{"Variable": "$.x", "NumericEquals": "1", "Next": "B"},
				{"Variable": "$.x", "BooleanEquals": "true", "Next": "B"},
				{"Variable": "$.x", "TimestampEquals": "yesterday", "Next": "B"},
				{"Variable": "$.x", "IsPresent": 1, "Next": "B"},
				{"And": [{"Variable": "$.x", "NumericLessThanPath": "x", "Next": "B"}], "Next": "B"}
			]}, "B": {"Type": "Succeed"}`),
			want: []asl.Diagnostic{
				schemaDiag("Expected value of type [STRING]", "/States/A/Choices[0]/StringEquals"),
				schemaDiag("Expected value of type [NUMBER]", "/States/A/Choices[1]/NumericEquals"),
				schemaDiag("Expected value of type [BOOLEAN]", "/States/A/Choices[2]/BooleanEquals"),
				schemaDiag("String does not match RFC3339 timestamp", "/States/A/Choices[3]/TimestampEquals"),
				schemaDiag("Expected value of type [BOOLEAN]", "/States/A/Choices[4]/IsPresent"),
				schemaDiag("The value for the field 'NumericLessThanPath' must be a valid JSONPath", "/States/A/Choices[5]/And[0]/NumericLessThanPath"),
				schemaDiag("Field 'Next' is not supported", "/States/A/Choices[5]/And[0]"),
			},
		},
		{
			name: "ChoiceWithoutChoices",
			def:  machine(`"A": {"Type": "Choice", "Default": "B"}, "B": {"Type": "Succeed"}`),
			want: []asl.Diagnostic{schemaDiag("These fields are required: [Choices]", "/States/A")},
		},
		{
			name: "JSONPathFieldsInJSONata",
			def: `{"QueryLanguage": "JSONata", "StartAt": "A", "States": {
				"A": {"Type": "Pass", "InputPath": "$.a", "Parameters": {}, "Next": "C"},
				"C": {"Type": "Choice", "Choices": [{"Variable": "$.x", "IsNull": true, "Next": "W"}], "Default": "W"},
				"W": {"Type": "Wait", "SecondsPath": "$.s", "End": true}}}`,
			want: []asl.Diagnostic{
				schemaDiag("The QueryLanguage is set to 'JSONata', but field 'InputPath' is only supported for the 'JSONPath' QueryLanguage", "/States/A"),
				schemaDiag("The QueryLanguage is set to 'JSONata', but field 'Parameters' is only supported for the 'JSONPath' QueryLanguage", "/States/A"),
				schemaDiag("The QueryLanguage is set to 'JSONata', but field 'Variable' is only supported for the 'JSONPath' QueryLanguage", "/States/C/Choices[0]"),
				schemaDiag("The QueryLanguage is set to 'JSONata', but field 'IsNull' is only supported for the 'JSONPath' QueryLanguage", "/States/C/Choices[0]"),
				schemaDiag("These fields are required: [Condition]", "/States/C/Choices[0]"),
				schemaDiag("The QueryLanguage is set to 'JSONata', but field 'SecondsPath' is only supported for the 'JSONPath' QueryLanguage", "/States/W"),
			},
		},
		{
			name: "JSONataFieldsInJSONPath",
			def: machine(`"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Arguments": {}, "Output": 1, "Next": "C"},
				"C": {"Type": "Choice", "Choices": [{"Condition": "{% true %}", "Next": "D"}], "Default": "D"},
				"D": {"Type": "Succeed"}`),
			want: []asl.Diagnostic{
				schemaDiag("The QueryLanguage is set to 'JSONPath', but field 'Arguments' is only supported for the 'JSONata' QueryLanguage", "/States/A"),
				schemaDiag("The QueryLanguage is set to 'JSONPath', but field 'Output' is only supported for the 'JSONata' QueryLanguage", "/States/A"),
				schemaDiag("The QueryLanguage is set to 'JSONPath', but field 'Condition' is only supported for the 'JSONata' QueryLanguage", "/States/C/Choices[0]"),
				schemaDiag("A Choice Rule must have exactly one of the fields [And, Or, Not] or a comparison operator with 'Variable'", "/States/C/Choices[0]"),
			},
		},
		{
			name: "DowngradeReportsOnlyTheDowngrade",
			def:  `{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass", "QueryLanguage": "JSONPath", "Output": {"v": "{% 1 %}"}, "End": true}}}`,
			want: []asl.Diagnostic{schemaDiag("'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine", "/States/A")},
		},
		{
			name: "DowngradeInsideAMap",
			def: `{"QueryLanguage": "JSONata", "StartAt": "M", "States": {"M": {"Type": "Map",
				"ItemProcessor": {"StartAt": "P", "States": {"P": {"Type": "Pass", "QueryLanguage": "JSONPath", "End": true}}}, "End": true}}}`,
			want: []asl.Diagnostic{schemaDiag("'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine", "/States/M/ItemProcessor/States/P")},
		},
		{
			name: "NestedStatesUseTheMachinesLanguage",
			def: `{"StartAt": "M", "States": {"M": {"Type": "Map", "QueryLanguage": "JSONata",
				"ItemProcessor": {"StartAt": "P", "States": {"P": {"Type": "Pass", "Output": {"v": "{% 1 %}"}, "End": true}}}, "End": true}}}`,
			want: []asl.Diagnostic{schemaDiag("The QueryLanguage is set to 'JSONPath', but field 'Output' is only supported for the 'JSONata' QueryLanguage", "/States/M/ItemProcessor/States/P")},
		},
		{
			name: "NestedMachineCannotDeclareLanguage",
			def: machine(`"A": {"Type": "Parallel", "Branches": [{"QueryLanguage": "JSONata", "StartAt": "P",
				"States": {"P": {"Type": "Pass", "End": true}}}], "End": true}`),
			want: []asl.Diagnostic{schemaDiag("Field 'QueryLanguage' is not supported", "/States/A/Branches[0]")},
		},
		{
			name: "StateLanguageValue",
			def:  machine(`"A": {"Type": "Pass", "QueryLanguage": 5, "InputPath": "$.a", "End": true}`),
			want: []asl.Diagnostic{
				schemaDiag("The QueryLanguage is set to 'JSONata', but field 'InputPath' is only supported for the 'JSONPath' QueryLanguage", "/States/A"),
				schemaDiag("Expected value of type [STRING]", "/States/A/QueryLanguage"),
			},
		},
		{
			name: "MapFields",
			def: machine(`"A": {"Type": "Map", "MaxConcurrency": -1, "ToleratedFailurePercentage": 101,
				"ItemSelector": {}, "Parameters": {}, "End": true}`),
			want: []asl.Diagnostic{
				schemaDiag("Minimum value is 0", "/States/A/MaxConcurrency"),
				schemaDiag("Maximum value is 100.0", "/States/A/ToleratedFailurePercentage"),
				schemaDiag("These fields are required: [ItemProcessor]", "/States/A"),
				schemaDiag("These fields cannot be specified together: [ItemSelector, Parameters]", "/States/A/ItemSelector"),
			},
		},
		{
			name: "MapProcessorConfig",
			def: machine(`"A": {"Type": "Map", "ItemProcessor": {"ProcessorConfig": {"Mode": "PARALLEL", "Foo": 1},
				"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}, "Next": "B"},
				"B": {"Type": "Map", "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED"},
				"StartAt": "P2", "States": {"P2": {"Type": "Pass", "End": true}}}, "End": true}`),
			want: []asl.Diagnostic{
				schemaDiag("Value should be one of the following: [INLINE, DISTRIBUTED]", "/States/A/ItemProcessor/ProcessorConfig/Mode"),
				schemaDiag("Field 'Foo' is not supported", "/States/A/ItemProcessor/ProcessorConfig"),
				schemaDiag("These fields are required: [ExecutionType]", "/States/B/ItemProcessor/ProcessorConfig"),
			},
		},
		{
			name: "MapReaderAndWriter",
			def: machine(`"A": {"Type": "Map", "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "EXPRESS"},
				"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}},
				"ItemReader": {"Resource": "arn:aws:states:::s3:unknownOperation", "ReaderConfig": {"InputType": "XML"}},
				"ResultWriter": {"Resource": "arn:aws:states:::s3:putObject"},
				"ItemBatcher": {"MaxItemsPerBatch": -1, "Bogus": true},
				"End": true}`),
			want: []asl.Diagnostic{
				schemaDiag("The field 'Resource' does not match any of the allowed values. Examples: [arn:<partition>:states:::s3:getObject, arn:<partition>:states:::s3:listObjectsV2]", "/States/A/ItemReader/Resource"),
				schemaDiag("Value should be one of the following: [CSV, JSON, JSONL, MANIFEST, PARQUET]", "/States/A/ItemReader/ReaderConfig/InputType"),
				schemaDiag("These fields are required: [Parameters]", "/States/A/ResultWriter"),
				schemaDiag("Minimum value is 0", "/States/A/ItemBatcher/MaxItemsPerBatch"),
				schemaDiag("Field 'Bogus' is not supported", "/States/A/ItemBatcher"),
			},
		},
		{
			name: "DistributedExpressChildrenCannotWait",
			def: machine(`"A": {"Type": "Map", "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "EXPRESS"},
				"StartAt": "P", "States": {"P": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken", "End": true}}}, "End": true}`),
			want: []asl.Diagnostic{
				schemaDiag("Express state machine does not support '.waitForTaskToken' service integration ", "/States/A/ItemProcessor/States/P/Resource"),
			},
		},
		{
			name: "FailFields",
			def:  machine(`"A": {"Type": "Fail", "Error": "E", "ErrorPath": "$.e", "Cause": 1, "InputPath": "$"}`),
			want: []asl.Diagnostic{
				schemaDiag("Expected value of type [STRING]", "/States/A/Cause"),
				schemaDiag("Field 'InputPath' is not supported", "/States/A"),
				schemaDiag("These fields cannot be specified together: [Error, ErrorPath]", "/States/A"),
			},
		},
		{
			name: "JSONataExpressions",
			def: `{"QueryLanguage": "JSONata", "StartAt": "A", "States": {
				"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "TimeoutSeconds": "ten", "Next": "W"},
				"W": {"Type": "Wait", "Seconds": "$.s", "End": true}}}`,
			want: []asl.Diagnostic{
				schemaDiag("The value for the field 'TimeoutSeconds' must be a JSONata expression enclosed in '{%' and '%}'", "/States/A/TimeoutSeconds"),
				schemaDiag("The value for the field 'Seconds' must be a JSONata expression enclosed in '{%' and '%}'", "/States/W/Seconds"),
			},
		},
		{
			name: "ParallelWithoutBranches",
			def:  machine(`"A": {"Type": "Parallel", "Branches": [], "Next": "B"}, "B": {"Type": "Parallel", "End": true}`),
			want: []asl.Diagnostic{
				schemaDiag("The field 'Branches' must not be empty", "/States/A/Branches"),
				schemaDiag("These fields are required: [Branches]", "/States/B"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			require.Equal(t, tt.want, asl.Validate([]byte(tt.def), tt.opts))
		})
	}
}

func TestValidate_invalidJSON(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		def  string
		msg  string
		loc  string
	}{
		{
			name: "UnrecognizedToken",
			def:  "not a definition",
			msg:  "Unrecognized token 'not': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')",
			loc:  `[Source: (String)"not a definition"; line: 1, column: 4]`,
		},
		{
			name: "MisspelledLiteral",
			def:  `{"a": tru}`,
			msg:  "Unrecognized token 'tru': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')",
			loc:  `[Source: (String)"{"a": tru}"; line: 1, column: 10]`,
		},
		{
			name: "MissingComma",
			def:  "{\n\"a\": 1\n\"b\": 2}",
			msg:  "Unexpected character ('\"' (code 34)): was expecting comma to separate Object entries",
			loc:  "[Source: (String)\"{\n\"a\": 1\n\"b\": 2}\"; line: 3, column: 2]",
		},
		{
			name: "Unterminated",
			def:  `{"a": [1, 2}`,
			msg:  "Unexpected close marker '}': expected ']' (for Array starting at [Source: (String)\"{\"a\": [1, 2}\"; line: 1, column: 7])",
			loc:  `[Source: (String)"{"a": [1, 2}"; line: 1, column: 13]`,
		},
		{
			name: "EndOfInput",
			def:  `{"a": 1`,
			msg:  "Unexpected end-of-input: expected close marker for Object (start marker at [Source: (String)\"{\"a\": 1\"; line: 1, column: 1])",
			loc:  `[Source: (String)"{"a": 1"; line: 1, column: 8]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			require.Equal(t, []asl.Diagnostic{{
				Severity: asl.SeverityError,
				Code:     asl.CodeInvalidJSON,
				Message:  tt.msg + "\n at " + tt.loc,
				Location: tt.loc,
			}}, asl.Validate([]byte(tt.def), asl.Options{}))
		})
	}
}

func TestValidate_cap(t *testing.T) {
	t.Parallel()

	var b strings.Builder
	b.WriteString(`{"StartAt": "S0", "States": {`)
	for i := range 50 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"S` + string(rune('A'+i%26)) + strings.Repeat("x", i) + `": {"Type": "Pass", "Bogus": 1, "End": true}`)
	}
	b.WriteString(`}}`)

	diags := asl.Validate([]byte(b.String()), asl.Options{MaxDiagnostics: 7})
	require.Len(t, diags, 7)
	require.Equal(t, schemaDiag("Field 'Bogus' is not supported", "/States/SA"), diags[0])

	diags = asl.Validate([]byte(b.String()), asl.Options{})
	require.Len(t, diags, asl.DefaultMaxDiagnostics)
}

func TestDiagnostic_String(t *testing.T) {
	t.Parallel()

	d := schemaDiag("These fields are required: [States]", "/")
	require.Equal(t, "SCHEMA_VALIDATION_FAILED: These fields are required: [States] at /", d.String())

	d = asl.Diagnostic{Severity: asl.SeverityError, Code: asl.CodeMissingEndState, Message: "Workflow has no terminal state"}
	require.Equal(t, "MISSING_END_STATE: Workflow has no terminal state at null", d.String())
}

func TestValidate_JSONataSyntaxErrors(t *testing.T) {
	t.Parallel()
	def := `{"QueryLanguage": "JSONata", "StartAt": "P", "States": {
		"P": {"Type": "Parallel", "Next": "B", "Branches": [{"StartAt": "A", "States": {
			"A": {"Type": "Pass", "Output": {"x": ["ok", "{% $states.input.( %}"]}, "End": true}}}]},
		"B": {"Type": "Choice", "Choices": [{"Condition": "{% 1 + %}", "Next": "C"}], "Default": "C"},
		"C": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Arguments": "{% $x := %}", "End": true,
			"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "D", "Assign": {"e": "{% ] %}"}}]},
		"D": {"Type": "Succeed"}}}`
	diags := asl.Validate([]byte(def), asl.Options{})
	var got []string
	for _, d := range diags {
		got = append(got, d.Location+": "+d.Message)
	}
	require.Equal(t, []string{
		"/States/P/Branches[0]/States/A/Output/x/1: The JSONata expression '$states.input.(' is not valid: Unexpected end of expression (S0207 at position 15)",
		"/States/B/Choices[0]/Condition: The JSONata expression '1 +' is not valid: Unexpected end of expression (S0207 at position 3)",
		"/States/C/Arguments: The JSONata expression '$x :=' is not valid: Unexpected end of expression (S0207 at position 5)",
		"/States/C/Catch[0]/Assign/e: The JSONata expression ']' is not valid: The symbol ] cannot be used as a unary operator (S0211 at position 1)",
	}, got)
}
