package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A definition as SAM repositories keep it: placeholders that
// DefinitionSubstitutions fill in, one where a number goes.
const samQueueDefinition = `{
  "StartAt": "Send",
  "States": {
    "Send": {
      "Type": "Task",
      "Resource": "arn:aws:states:::sqs:sendMessage",
      "Parameters": {"QueueUrl": "${QueueUrl}", "MessageBody.$": "$"},
      "TimeoutSeconds": ${Timeout},
      "End": true
    }
  }
}
`

// --substitutions gives the placeholders their values: NAME=VALUE, a
// JSON file or a YAML file; a placeholder left is named, with its line.
func TestValidateSubstitutions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", samQueueDefinition)

	out, _, code := execute("validate", def)
	require.Equal(t, 1, code)
	require.Contains(t, out, def+":7:35: ERROR MISSING_SUBSTITUTION: ${QueueUrl} has no value; give it with --substitutions QueueUrl=VALUE\n")
	require.Contains(t, out, def+":8:25: ERROR MISSING_SUBSTITUTION: ${Timeout} has no value; give it with --substitutions Timeout=VALUE\n")

	out, _, code = execute("validate", "--substitutions", "QueueUrl=https://sqs.us-east-1.amazonaws.com/123456789012/q", "--substitutions", "Timeout=30", def)
	require.Equal(t, 0, code, out)
	require.Empty(t, out)

	jsonSubs := b.write(t, "subs.json", `{"QueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/q", "Timeout": 30}`)
	out, _, code = execute("validate", "--substitutions", jsonSubs, def)
	require.Equal(t, 0, code, out)
	require.Empty(t, out)

	yamlSubs := b.write(t, "subs.yaml", "QueueUrl: https://sqs.us-east-1.amazonaws.com/123456789012/q\nTimeout: 30\n")
	out, _, code = execute("validate", "--substitutions", yamlSubs, def)
	require.Equal(t, 0, code, out)
	require.Empty(t, out)

	// One missing: named. The definition is valid JSON then, and
	// otherwise valid, so it is a warning and the exit status stays 0.
	out, _, code = execute("validate", "--substitutions", "Timeout=30", def)
	require.Equal(t, 0, code, out)
	require.Equal(t, def+":7:35: WARNING MISSING_SUBSTITUTION: ${QueueUrl} has no value; give it with --substitutions QueueUrl=VALUE\n", out)

	out, _, code = execute("validate", "--format", "json", "--substitutions", "Timeout=30", def)
	require.Equal(t, 0, code, out)
	var resp validateResponse
	require.NoError(t, json.Unmarshal([]byte(out), &resp))
	require.Equal(t, "OK", resp.Result)
	require.Equal(t, "MISSING_SUBSTITUTION", resp.Diagnostics[0].Code)

	// A file of substitutions that is not an object of scalars.
	bad := b.write(t, "bad.yaml", "- a\n- b\n")
	_, errOut, code := execute("validate", "--substitutions", bad, def)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--substitutions "+bad+": an object of names to values, got")
	_, errOut, code = execute("validate", "--substitutions", filepath.Join(b.dir, "nope.json"), def)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "nope.json")
}

// A .asl.yaml definition is read as YAML, as deploy and stepwise test
// read it; its placeholders are found on its own lines.
func TestValidateYAMLDefinition(t *testing.T) {
	t.Parallel()
	b := setup(t)
	good := b.write(t, "flow.asl.yaml", "StartAt: A\nStates:\n  A:\n    Type: Pass\n    End: true\n")
	out, _, code := execute("validate", good)
	require.Equal(t, 0, code, out)
	require.Empty(t, out)

	bad := b.write(t, "bad.asl.yml", "StartAt: A\nStates:\n  A:\n    Type: Task\n    Resource: ${FnArn}\n    Next: Nowhere\n")
	out, _, code = execute("validate", bad)
	require.Equal(t, 1, code)
	require.Contains(t, out, bad+":5:15: ERROR MISSING_SUBSTITUTION: ${FnArn} has no value")
	require.Contains(t, out, bad+": ERROR MISSING_TRANSITION_TARGET /States/A/Next: Missing 'Next' target: Nowhere\n")

	broken := b.write(t, "broken.yaml", "StartAt: A\nStates: [\n")
	out, _, code = execute("validate", broken)
	require.Equal(t, 1, code)
	require.Contains(t, out, broken+": ERROR INVALID_YAML /: yaml: line 2: did not find expected node content\n")
}

// --template validates each state machine of a SAM template by its
// logical id: one inline whose DefinitionSubstitutions refer to the
// template's resources, one in a DefinitionUri .asl.yaml file.
func TestValidateTemplate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, os.Mkdir(filepath.Join(b.dir, "statemachine"), 0o755))
	b.write(t, "statemachine/billing.asl.yaml", "StartAt: Charge\nStates:\n  Charge:\n    Type: Task\n    Resource: ${WorkerArn}\n    Next: Nowhere\n")
	tpl := b.write(t, "template.yaml", `AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Resources:
  Queue:
    Type: AWS::SQS::Queue
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      Handler: app.handler
      Runtime: python3.12
      CodeUri: src/
  OrderFlow:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionSubstitutions:
        QueueUrl: !Ref Queue
        WorkerArn: !GetAtt Worker.Arn
      Definition:
        StartAt: Work
        States:
          Work:
            Type: Task
            Resource: ${WorkerArn}
            Next: Send
          Send:
            Type: Task
            Resource: arn:aws:states:::sqs:sendMessage
            Parameters:
              QueueUrl: ${QueueUrl}
              MessageBody.$: $
            End: true
  Billing:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionUri: statemachine/billing.asl.yaml
      DefinitionSubstitutions:
        WorkerArn: !GetAtt Worker.Arn
`)
	out, _, code := execute("validate", "--template", tpl)
	require.Equal(t, 1, code)
	require.Equal(t, strings.Join([]string{
		tpl + "#Billing: ERROR MISSING_TRANSITION_TARGET /States/Charge/Next: Missing 'Next' target: Nowhere",
		tpl + "#Billing: ERROR MISSING_END_STATE /: Workflow has no terminal state",
		"",
	}, "\n"), out)

	out, _, code = execute("validate", "--format", "json", "--template", tpl)
	require.Equal(t, 1, code)
	dec := json.NewDecoder(strings.NewReader(out))
	var results []validateResponse
	for dec.More() {
		var r validateResponse
		require.NoError(t, dec.Decode(&r))
		results = append(results, r)
	}
	require.Len(t, results, 2)
	require.Equal(t, tpl+"#Billing", results[0].File)
	require.Equal(t, "FAIL", results[0].Result)
	require.Equal(t, tpl+"#OrderFlow", results[1].File)
	require.Equal(t, "OK", results[1].Result, out)

	// A placeholder the template does not give is named, where it is.
	b.write(t, "statemachine/billing.asl.yaml", "StartAt: Charge\nStates:\n  Charge:\n    Type: Task\n    Resource: ${ChargerArn}\n    End: true\n")
	out, _, code = execute("validate", "--template", tpl)
	require.Equal(t, 1, code)
	require.Contains(t, out, tpl+"#Billing: ERROR MISSING_SUBSTITUTION: ${ChargerArn} has no value: the template's DefinitionSubstitutions do not give it; give it with --substitutions ChargerArn=VALUE ("+filepath.Join(b.dir, "statemachine/billing.asl.yaml")+":5:15)\n")
	out, _, code = execute("validate", "--template", tpl, "--substitutions", "ChargerArn=arn:aws:lambda:us-east-1:123456789012:function:charge")
	require.Equal(t, 0, code, out)
	require.Empty(t, out)

	// A template with no state machine.
	none := b.write(t, "none.yaml", "Resources:\n  Queue:\n    Type: AWS::SQS::Queue\n")
	_, errOut, code := execute("validate", "--template", none)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "no AWS::StepFunctions::StateMachine or AWS::Serverless::StateMachine")
}

// A JSON DefinitionUri file's placeholders are substituted as text, as
// CloudFormation does: one standing for a number may be unquoted.
func TestValidateTemplateUnquotedPlaceholder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write(t, "flow.asl.json", samQueueDefinition)
	tpl := b.write(t, "template.yaml", `Transform: AWS::Serverless-2016-10-31
Resources:
  Orders:
    Type: AWS::SQS::Queue
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionUri: flow.asl.json
      DefinitionSubstitutions:
        QueueUrl: !Ref Orders
        Timeout: 30
`)
	out, _, code := execute("validate", "--template", tpl)
	require.Equal(t, 0, code, out)
	require.Empty(t, out)
}

// --template splices a template's AWS::Include files in, as a deploy
// does, so a state machine kept in an included file is validated.
func TestValidateTemplateInclude(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write(t, "machines.yaml", `Flow:
  Type: AWS::StepFunctions::StateMachine
  Properties:
    RoleArn: arn:aws:iam::123456789012:role/r
    Definition:
      StartAt: P
      States:
        P:
          Type: Pass
          Next: Gone
`)
	tpl := b.write(t, "template.yaml", `Resources:
  Fn::Transform:
    Name: AWS::Include
    Parameters:
      Location: machines.yaml
`)
	out, _, code := execute("validate", "--template", tpl)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, tpl+"#Flow: ERROR MISSING_TRANSITION_TARGET /States/P/Next: Missing 'Next' target: Gone")
}

// An aws-sdk Task of a service no built-in model describes passes AWS's
// checks but would fail at run time: validate warns, naming how to add
// the model; one of a service with a model is not warned of.
func TestValidateWarnsOfAnAWSServiceWithoutModel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "lightsail.asl.json", `{"StartAt":"D","States":{"D":{"Type":"Task","Resource":"arn:aws:states:::aws-sdk:lightsail:getInstances","Next":"L"},
		"L":{"Type":"Task","Resource":"arn:aws:states:::aws-sdk:ec2:describeInstances","End":true}}}`)
	out, _, code := execute("validate", def)
	require.Equal(t, 0, code, out)
	require.Equal(t, def+": WARNING UNSERVED_RESOURCE /States/D/Resource: no integration runs arn:aws:states:::aws-sdk:lightsail:getInstances"+
		" (no model of the AWS service lightsail is built in; put botocore's lightsail service-2.json in a folder and name it with STEPWISE_AWS_MODELS)"+
		": the task would fail with States.TaskFailed\n", out)
}
