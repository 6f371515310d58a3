package asl_test
import ("testing";"fmt";"stepwise/asl")
func TestX(t *testing.T){
	for _, d := range []string{
		machine(`"A": {"Type": "Pass", "Parameters": {"z.$": "States.NoSuchFunction($.a)", "w.$": "States.Format('{}'", "v.$": "States.Format('{}', $.a)", "u.$": "$.a[?(@.b > 1)]", "t.$": "$..x"}, "End": true}`),
		machine(`"A": {"Type": "Pass", "InputPath": "$.a[*]", "ResultPath": "$.a[0]", "OutputPath": "$.b..c", "End": true}`),
		machine(`"A": {"Type": "Map", "ItemsPath": "$.a[*]", "ItemProcessor": {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}, "End": true}`),
		machine(`"A": {"Type": "Fail", "CausePath": "States.Format('x {}', $.a)", "ErrorPath": "States.StringToJson($.a)"}`),
		machine(`"A": {"Type": "Choice", "Choices": [{"Variable": "$$.Map.Item.Value", "IsNull": true, "Next": "B"}, {"Variable": "$x", "StringEqualsPath": "$y.z", "Next": "B"}], "Default": "B"}, "B": {"Type": "Succeed"}`),
	} {
		for _, x := range asl.Validate([]byte(d), asl.Options{}) { fmt.Println(x) }
		fmt.Println("--")
	}
}
