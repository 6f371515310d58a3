package e2e

import (
	"archive/zip"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
)

// buildsTemplate is a SAM application whose functions need what `sam
// build` would install: a Python function with a requirements.txt and
// a layer, a Node.js ES module with a package.json dependency that also
// calls SQS with the AWS SDK Lambda's runtime bundles; a state machine
// calls both.
const buildsTemplate = `
Transform: AWS::Serverless-2016-10-31
Resources:
  Shared:
    Type: AWS::Serverless::LayerVersion
    Properties: {LayerName: shared, ContentUri: layer/, CompatibleRuntimes: [python3.12]}
  Greet:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: builds-greet
      CodeUri: greet/
      Handler: app.handler
      Runtime: python3.12
      Timeout: 30
      Layers: [!Ref Shared]
  Queue:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: builds-queue
      CodeUri: queue/
      Handler: app.handler
      Runtime: nodejs20.x
      Timeout: 30
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Name: builds
      Definition:
        StartAt: Greet
        States:
          Greet:
            Type: Task
            Resource: arn:aws:states:::lambda:invoke
            Parameters: {FunctionName: builds-greet, "Payload.$": "$"}
            ResultSelector: {"greeting.$": "$.Payload"}
            ResultPath: $.greet
            Next: Queue
          Queue:
            Type: Task
            Resource: arn:aws:states:::lambda:invoke
            Parameters: {FunctionName: builds-queue, "Payload.$": "$"}
            ResultSelector: {"queue.$": "$.Payload"}
            ResultPath: $.queue
            End: true
`

// wheelFolder makes a folder pip installs greeting 1.0 from (a wheel).
func wheelFolder(t *testing.T) string {
	links := t.TempDir()
	f, err := os.Create(filepath.Join(links, "greeting-1.0-py3-none-any.whl"))
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for name, body := range map[string]string{
		"greeting.py":                     "def hello(name):\n    return 'hello ' + name\n",
		"greeting-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: greeting\nVersion: 1.0\n",
		"greeting-1.0.dist-info/WHEEL":    "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
		"greeting-1.0.dist-info/RECORD":   "greeting.py,,\ngreeting-1.0.dist-info/METADATA,,\ngreeting-1.0.dist-info/WHEEL,,\ngreeting-1.0.dist-info/RECORD,,\n",
	} {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	return links
}

// writeTree writes files (relative path → body) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
}

const installedLine = "installed a function's dependencies"

// TestDeployedFunctionsBuilt deploys a SAM application whose functions
// need their requirements.txt, package.json, a layer and the bundled
// AWS SDK for JavaScript, runs it, and runs it again after a restart on
// the same database and build cache: nothing is installed again.
func TestDeployedFunctionsBuilt(t *testing.T) {
	t.Parallel()
	for _, program := range []string{"python3", "node", "npm"} {
		if _, err := exec.LookPath(program); err != nil {
			t.Skipf("%s is not installed: the functions need it", program)
		}
	}
	ctx := context.Background()
	moto := integrationtest.Moto(t)
	app := t.TempDir()
	writeTree(t, app, map[string]string{
		"template.yaml":          buildsTemplate,
		"layer/python/shared.py": "WORD = 'from the layer'\n",
		"greet/requirements.txt": "greeting==1.0\n",
		"greet/app.py": "import greeting, shared\n" +
			"def handler(event, context):\n" +
			"    return {'hello': greeting.hello(event['name']), 'layer': shared.WORD}\n",
		"queue/package.json": `{"name": "queue", "version": "1.0.0", "type": "module", "dependencies": {"ms": "2.1.3"}}` + "\n",
		"queue/app.mjs": `import ms from 'ms';
import { SQSClient, CreateQueueCommand, SendMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';

const sqs = new SQSClient({});

export const handler = async (event) => {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'builds-' + event.name }));
  await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'for ' + event.name }));
  const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
  return { ms: ms('2 days'), message: got.Messages[0].Body };
};
`,
	})
	db := filepath.Join(t.TempDir(), "stepwise.db")
	cache := filepath.Join(t.TempDir(), "builds")
	env := []string{"PIP_NO_INDEX=1", "PIP_FIND_LINKS=" + wheelFolder(t)}
	args := []string{"--aws-endpoint", moto, "--build-cache", cache}

	run := func(s *server, name string) map[string]any {
		t.Helper()
		c := s.client(t)
		started, err := c.StartExecution(ctx, &sfn.StartExecutionInput{Name: aws.String(name), Input: aws.String(`{"name": "` + name + `"}`),
			StateMachineArn: aws.String(smArn("builds"))})
		require.NoError(t, err)
		done := waitDone(t, c, aws.ToString(started.ExecutionArn))
		require.Equal(t, "SUCCEEDED", string(done.Status), "%s: %s\n%s", aws.ToString(done.Error), aws.ToString(done.Cause), s.stderr.String())
		var out map[string]any
		require.NoError(t, json.Unmarshal([]byte(aws.ToString(done.Output)), &out))
		return out
	}
	check := func(out map[string]any, name string) {
		t.Helper()
		require.Equal(t, map[string]any{"greeting": map[string]any{"hello": "hello " + name, "layer": "from the layer"}}, out["greet"])
		require.Equal(t, map[string]any{"queue": map[string]any{"ms": float64(172800000), "message": "for " + name}}, out["queue"])
	}

	s := startServerEnv(t, env, db, args...)
	out, code := stepwiseCLI(t, "deploy", filepath.Join(app, "template.yaml"), "--endpoint", s.url())
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "created   Greet (AWS::Serverless::Function)")
	check(run(s, "first"), "first")
	log := s.stderr.String()
	require.Equal(t, 2, strings.Count(log, installedLine), log) // requirements.txt and package.json
	require.Contains(t, log, "installed the AWS SDK for JavaScript Lambda's runtime bundles")
	builds, err := os.ReadDir(cache)
	require.NoError(t, err)
	var names []string
	for _, b := range builds {
		names = append(names, b.Name())
	}
	require.Len(t, names, 3, "the Python and Node.js installs and the SDK: %v", names)
	require.Contains(t, names, "aws-sdk-js-v3")

	// Restarted on the same database: the functions are put back from
	// the cache, nothing installed again.
	s.stop(t)
	s = startServerEnv(t, env, db, args...)
	check(run(s, "second"), "second")
	log = s.stderr.String()
	require.NotContains(t, log, installedLine, log)
	require.NotContains(t, log, "installed the AWS SDK", log)
}

// A function whose requirements do not install fails the deploy, in
// words naming the function, the file and pip's.
func TestDeployFailedInstall(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	app := t.TempDir()
	writeTree(t, app, map[string]string{
		"template.yaml": `
Transform: AWS::Serverless-2016-10-31
Resources:
  Broken:
    Type: AWS::Serverless::Function
    Properties: {FunctionName: builds-broken, CodeUri: src/, Handler: app.handler, Runtime: python3.12}
`,
		"src/requirements.txt": "no-such-package-anywhere==9.9\n",
		"src/app.py":           "def handler(event, context):\n    return 1\n",
	})
	s := startServerEnv(t, []string{"PIP_NO_INDEX=1", "PIP_FIND_LINKS=" + wheelFolder(t)}, filepath.Join(t.TempDir(), "stepwise.db"),
		"--build-cache", filepath.Join(t.TempDir(), "builds"))
	out, code := stepwiseCLI(t, "deploy", filepath.Join(app, "template.yaml"), "--endpoint", s.url())
	require.NotEqual(t, 0, code, out)
	require.Contains(t, out, "builds-broken")
	require.Contains(t, out, "install "+filepath.Join(app, "src", "requirements.txt"))
	require.Contains(t, out, "No matching distribution found for no-such-package-anywhere==9.9")
}
