package asl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
)

// Credentials take the role to assume as RoleArn, or in JSONPath as
// RoleArn.$; anything else is refused at its location.
func TestValidateCredentials(t *testing.T) {
	t.Parallel()
	task := func(lang, creds string) string {
		return `{"QueryLanguage": "` + lang + `", "StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Credentials": ` + creds + `, "End": true}}}`
	}
	const loc = "/States/A/Credentials"
	for _, tt := range []struct {
		name, def string
		want      []asl.Diagnostic
	}{
		{"Literal", task("JSONPath", `{"RoleArn": "arn:aws:iam::111111111111:role/r"}`), nil},
		{"Path", task("JSONPath", `{"RoleArn.$": "$.role"}`), nil},
		{"Intrinsic", task("JSONPath", `{"RoleArn.$": "States.Format('arn:aws:iam::{}:role/r', $.a)"}`), nil},
		{"Variable", task("JSONPath", `{"RoleArn.$": "$role"}`), nil},
		{"JSONataExpr", task("JSONata", `{"RoleArn": "{% $states.input.role %}"}`), nil},
		{"NotAnObject", task("JSONPath", `"arn:aws:iam::111111111111:role/r"`), []asl.Diagnostic{schemaDiag("Expected value of type [OBJECT]", loc)}},
		{"Empty", task("JSONPath", `{}`), []asl.Diagnostic{schemaDiag("These fields are required: [RoleArn]", loc)}},
		{"UnknownField", task("JSONPath", `{"RoleArn": "arn:aws:iam::111111111111:role/r", "ExternalId": "x"}`),
			[]asl.Diagnostic{schemaDiag("Field 'ExternalId' is not supported", loc)}},
		{"NotAString", task("JSONPath", `{"RoleArn": 12}`), []asl.Diagnostic{schemaDiag("Expected value of type [STRING]", loc+"/RoleArn")}},
		{"EmptyString", task("JSONPath", `{"RoleArn": ""}`), []asl.Diagnostic{schemaDiag("The field 'RoleArn' must not be empty", loc+"/RoleArn")}},
		{"BadPath", task("JSONPath", `{"RoleArn.$": "role"}`),
			[]asl.Diagnostic{schemaDiag("The value for the field 'RoleArn.$' must be a valid JSONPath or a valid intrinsic function call", loc)}},
		{"Both", task("JSONPath", `{"RoleArn": "arn:aws:iam::111111111111:role/r", "RoleArn.$": "$.role"}`),
			[]asl.Diagnostic{schemaDiag("The fields 'RoleArn' and 'RoleArn.$' cannot both be specified", loc)}},
		{"PathInJSONata", task("JSONata", `{"RoleArn.$": "$.role"}`),
			[]asl.Diagnostic{schemaDiag("The QueryLanguage is set to 'JSONata', but field 'RoleArn.$' is only supported for the 'JSONPath' QueryLanguage", loc)}},
		{"JSONataSyntax", task("JSONata", `{"RoleArn": "{% $states.input. %}"}`), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := asl.Validate([]byte(tt.def), asl.Options{})
			if tt.name == "JSONataSyntax" {
				require.Len(t, got, 1)
				require.Equal(t, loc+"/RoleArn", got[0].Location)
				return
			}
			require.Equal(t, tt.want, got)
		})
	}
}
