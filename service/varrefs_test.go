package service

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVariableReferencesOf(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct {
		name       string
		definition string
		want       VariableReferences
	}{
		{"None", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Parameters": {"x": "$notAPath"}, "End": true}}}`, nil},
		{"Invalid", `{"StartAt": "A"}`, nil},
		{"Paths", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "InputPath": "$a", "OutputPath": "$b.c", "ResultPath": "$.r",
			"Parameters": {"x.$": "$c[0]", "y.$": "States.Format('{}', $d)", "z.$": "$$.Execution.Id"}, "Next": "W"},
			"W": {"Type": "Wait", "SecondsPath": "$w", "Next": "C"},
			"C": {"Type": "Choice", "Choices": [{"Not": {"Variable": "$v", "StringEqualsPath": "$u"}, "Next": "F"}], "Default": "F"},
			"F": {"Type": "Fail", "ErrorPath": "$e", "CausePath": "States.Format('{}', $f)"}}}`,
			VariableReferences{"A": {"a", "b", "c", "d"}, "W": {"w"}, "C": {"u", "v"}, "F": {"e", "f"}}},
		{"ItemReader", `{"StartAt": "M", "States": {"M": {"Type": "Map", "ItemReader": {"ReaderConfig": {"InputType": "JSON", "MaxItemsPath": "$max"},
			"Resource": "arn:aws:states:::s3:getObject", "Parameters": {"Bucket.$": "$bucket", "Key": "k"}},
			"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}, "End": true}}}`,
			VariableReferences{"M": {"bucket", "max"}}},
		{"JSONata", `{"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Pass",
			"Output": {"x": "{% $a + $states.input.n + $count($list) %}", "y": "{% ($t := 1; $t + $b) %}", "z": "{% '$notVar' & $c %}"},
			"Assign": {"k": "{% $d %}"}, "Next": "C"},
			"C": {"Type": "Choice", "Choices": [{"Condition": "{% $e > 1 %}", "Next": "S"}], "Default": "S"}, "S": {"Type": "Succeed"}}}`,
			VariableReferences{"A": {"a", "b", "c", "d", "list"}, "C": {"e"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, variableReferencesOf(tt.definition))
		})
	}
}
