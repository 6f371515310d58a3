package cfn

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShortFormsBecomeLongForms(t *testing.T) {
	doc, err := decode([]byte(`
A: !Ref Name
B: !GetAtt Fn.Arn
C: !GetAtt [Fn, Arn]
D: !Sub "arn:${AWS::Region}"
E: !Sub ["${X}", {X: !Ref Y}]
F: !Join [",", [a, !Ref Z]]
G: !If [Cond, 1, !Ref AWS::NoValue]
H: !Select [0, !Split [",", "a,b"]]
I: !FindInMap [M, K, V]
J: !Base64 hi
K: !GetAZs ""
L: !ImportValue Shared
M: !And [!Equals [a, b], !Not [!Condition C], !Or [!Condition D, !Condition E]]
N: 1.50
O: yes
P: "007"
`))
	if err != nil {
		t.Fatal(err)
	}
	m := doc.(map[string]any)
	want := map[string]string{
		"A": `map[Ref:Name]`,
		"B": `map[Fn::GetAtt:[Fn Arn]]`,
		"C": `map[Fn::GetAtt:[Fn Arn]]`,
		"D": `map[Fn::Sub:arn:${AWS::Region}]`,
		"E": `map[Fn::Sub:[${X} map[X:map[Ref:Y]]]]`,
		"F": `map[Fn::Join:[, [a map[Ref:Z]]]]`,
		"G": `map[Fn::If:[Cond 1 map[Ref:AWS::NoValue]]]`,
		"H": `map[Fn::Select:[0 map[Fn::Split:[, a,b]]]]`,
		"I": `map[Fn::FindInMap:[M K V]]`,
		"J": `map[Fn::Base64:hi]`,
		"K": `map[Fn::GetAZs:]`,
		"L": `map[Fn::ImportValue:Shared]`,
		"M": `map[Fn::And:[map[Fn::Equals:[a b]] map[Fn::Not:[map[Condition:C]]] map[Fn::Or:[map[Condition:D] map[Condition:E]]]]]`,
		"N": `1.50`,
		"O": `yes`,
		"P": `007`,
	}
	for k, w := range want {
		if got := sprint(m[k]); got != w {
			t.Errorf("%s = %s, want %s", k, got, w)
		}
	}
}

func TestJSONAndYAMLReadAlike(t *testing.T) {
	j, err := decode([]byte(`{"A": {"Fn::GetAtt": ["Fn", "Arn"]}, "N": 3, "L": [true, null]}`))
	if err != nil {
		t.Fatal(err)
	}
	y, err := decode([]byte("A: !GetAtt Fn.Arn\nN: 3\nL: [true, null]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(j, y) {
		t.Fatalf("JSON %v and YAML %v differ", j, y)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"unknown tag", "Resources:\n  A:\n    Type: X\n    Properties: {P: !Bogus x}\n", "line 4: unknown tag !Bogus"},
		{"GetAtt without dot", "Resources:\n  A:\n    Type: X\n    Properties: {P: !GetAtt Fn}\n", "!GetAtt \"Fn\" must be LogicalId.Attribute"},
		{"bad JSON", `{"Resources": `, "not valid JSON"},
		{"bad YAML", "Resources: [\n", "not valid YAML"},
		{"not an object", "- a\n", "must be an object"},
		{"no resources", "Parameters: {}\n", "Resources section is missing"},
		{"no type", "Resources:\n  A:\n    Properties: {}\n", "resource A has no Type"},
		{"unknown section", "Resource:\n  A: {Type: X}\n", `unknown top-level section "Resource"`},
		{"bad pattern", "Parameters:\n  P: {AllowedPattern: \"[\"}\nResources:\n  A: {Type: X}\n", `Parameters.P.AllowedPattern "[" is not a regular expression`},
		{"logical id", "Resources:\n  My-Table: {Type: X}\n", "Resource name My-Table is non alphanumeric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestSAMTransformRecognised(t *testing.T) {
	tpl, err := Parse([]byte("Transform: AWS::Serverless-2016-10-31\nResources:\n  F: {Type: AWS::Serverless::Function}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !tpl.IsSAM() {
		t.Fatal("IsSAM is false for a template with SAM's transform")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("Resources:\n  A:\n    Type: X\n    Properties: {P: !Sub [\"${a}\", {a: !Ref B}]}\n"))
	f.Add([]byte(`{"Resources": {"A": {"Type": "X", "DependsOn": ["B"]}}}`))
	f.Add([]byte("a: &x [1, *x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tpl, err := Parse(data)
		if err != nil {
			return
		}
		if len(tpl.Resources) == 0 {
			t.Fatal("a parsed template has no resources")
		}
		r, err := Resolve(tpl, nil, fakeResolver{})
		if err == nil && len(r.Order) > len(tpl.Resources) {
			t.Fatalf("order %v has more resources than the template", r.Order)
		}
	})
}

func sprint(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			b.WriteString("map[")
			for i, k := range sortedKeys(x) {
				if i > 0 {
					b.WriteString(" ")
				}
				b.WriteString(k + ":")
				walk(x[k])
			}
			b.WriteString("]")
		case []any:
			b.WriteString("[")
			for i, e := range x {
				if i > 0 {
					b.WriteString(" ")
				}
				walk(e)
			}
			b.WriteString("]")
		default:
			fmt.Fprint(&b, x)
		}
	}
	walk(v)
	return b.String()
}

func TestAliasBombIsRefused(t *testing.T) {
	src := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		src += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = n
	}
	_, err := Parse([]byte(src + "Resources: {R: {Type: X, Properties: {P: *h}}}\n"))
	if err == nil || !strings.Contains(err.Error(), "expands to more than") {
		t.Fatalf("error %v, want the expansion refused", err)
	}

	// Few values, but their JSON gigabytes long.
	src = "a: &a \"" + strings.Repeat("x", 1<<20) + "\"\nb: &b [" + strings.Repeat("*a,", 1023) + "*a]\n"
	_, err = Decode([]byte(src + "States: {S: {Type: Pass, Result: *b}}\n"))
	if err == nil || err.Error() != "template: line 2: the document expands to more than 67108864 bytes of text (aliases within aliases?)" {
		t.Fatalf("error %v, want the expansion refused", err)
	}
}

func TestSAMImplicitResourcesAdded(t *testing.T) {
	t.Parallel()
	tp, err := Parse([]byte(`
Transform: AWS::Serverless-2016-10-31
Resources:
  Machine: {Type: AWS::Serverless::StateMachine, Properties: {Events: {Get: {Type: Api, Properties: {Path: /, Method: get}}}}}
  Owned: {Type: AWS::Serverless::StateMachine, Properties: {Role: arn:aws:iam::1:role/r}}
  Fn: {Type: AWS::Serverless::Function, Properties: {Events: {H: {Type: HttpApi}}}}
  Api: {Type: AWS::Serverless::Api, Properties: {StageName: Gamma}}
  FnRole: {Type: AWS::IAM::Role, Properties: {RoleName: mine}}
`))
	require.NoError(t, err)
	var got []string
	for _, id := range tp.ResourceIDs() {
		if r := tp.Resources[id]; r.Implicit != "" {
			got = append(got, id+" "+r.Type+" from "+r.Implicit)
		}
	}
	require.Equal(t, []string{
		"ApiDeployment" + shortHash("Api") + " AWS::ApiGateway::Deployment from Api",
		"ApiGammaStage AWS::ApiGateway::Stage from Api",
		"MachineRole AWS::IAM::Role from Machine",
		"ServerlessHttpApi AWS::ApiGatewayV2::Api from Fn",
		"ServerlessHttpApiApiGatewayDefaultStage AWS::ApiGatewayV2::Stage from Fn",
		"ServerlessRestApi AWS::ApiGateway::RestApi from Machine",
		"ServerlessRestApiDeployment" + shortHash("ServerlessRestApi") + " AWS::ApiGateway::Deployment from Machine",
		"ServerlessRestApiProdStage AWS::ApiGateway::Stage from Machine",
	}, got)
	require.Equal(t, "AWS::IAM::Role", tp.Resources["FnRole"].Type)
	require.Empty(t, tp.Resources["FnRole"].Implicit, "the template's own FnRole is kept")
}

func TestDuplicateKeysTheLastWinsWithAWarning(t *testing.T) {
	t.Parallel()
	tp, err := Parse([]byte("Resources:\n  A: {Type: X}\n  B:\n    Type: Y\n    Type: Z\n  A: {Type: W}\n"))
	require.NoError(t, err)
	require.Equal(t, "W", tp.Resources["A"].Type)
	require.Equal(t, "Z", tp.Resources["B"].Type)
	require.Equal(t, []string{
		`template: line 5: duplicate key "Type": this one is taken, the one before is ignored`,
		`template: line 6: duplicate key "A": this one is taken, the one before is ignored`,
	}, tp.Warnings)

	// A state machine's definition file keeps refusing them.
	_, err = Decode([]byte("StartAt: A\nStartAt: B\n"))
	require.EqualError(t, err, `template: line 2: duplicate key "StartAt"`)
}
