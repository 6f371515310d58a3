package cfn

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A mistake in any resource refuses the template at Prepare, before
// a caller makes the resources that come before it.
func TestPrepareRefusesWhatWouldFailLater(t *testing.T) {
	cases := map[string]struct{ template, want string }{
		"unknown function": {"Resources:\n  A: {Type: T, Properties: {}}\n  B: {Type: T, DependsOn: A, Properties: {X: {\"Fn::Nope\": 1}}}\n",
			"template: resource B, Properties.X.Fn::Nope: unknown intrinsic function Fn::Nope"},
		"ref in a list": {"Resources:\n  A: {Type: T, Properties: {}}\n  B: {Type: T, Properties: {X: [1, !Ref Gone]}}\n",
			`template: resource B, Properties.X[1].Ref: Ref to unknown parameter or resource "Gone"`},
		"getatt in a sub's map": {"Resources:\n  A: {Type: T, Properties: {X: !Sub ['${V}', {V: !GetAtt Gone.Arn}]}}\n",
			`template: resource A, Properties.X.Fn::Sub[1].V.Fn::GetAtt: Fn::GetAtt to unknown resource "Gone"`},
		"sub attribute": {"Resources:\n  A: {Type: T, Properties: {X: !Sub '${Gone.Arn}'}}\n",
			`Fn::GetAtt to unknown resource "Gone"`},
		"in an output": {"Resources:\n  A: {Type: T}\nOutputs:\n  O: {Value: !Join ['', [!Ref Gone]]}\n",
			`template: output O, Value.Fn::Join[1][0].Ref: Ref to unknown parameter or resource "Gone"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tp, err := Parse([]byte(tc.template))
			require.NoError(t, err)
			_, err = Prepare(tp, nil)
			require.ErrorContains(t, err, tc.want)
		})
	}
	// What is fine passes: a sub's own variables, escaped text,
	// pseudo parameters, a resource left out by its condition.
	tp, err := Parse([]byte(`Conditions:
  Never: !Equals [a, b]
Resources:
  A: {Type: T, Properties: {X: !Sub ['${V}-${!Literal}-${AWS::Region}-${B.Arn}', {V: x}]}}
  B: {Type: T}
  C: {Type: T, Condition: Never, Properties: {X: !Ref Gone}}
`))
	require.NoError(t, err)
	_, err = Prepare(tp, nil)
	require.NoError(t, err)
}
