package lambda_test

import (
	"archive/zip"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/integration/integrationtest"
	"stepwise/integration/lambda"
)

// writeFiles writes files (relative path → body) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o755))
	}
	return dir
}

// invoke invokes a local function, failing the test on an error of the
// invoke itself; it returns the payload and whether it is a function
// error.
func invoke(t *testing.T, l *lambda.Local, name, event string) (string, bool) {
	t.Helper()
	f := l.Lookup(name)
	require.NotNil(t, f, name)
	out, err := f.Invoke(context.Background(), &awslambda.InvokeInput{Payload: []byte(event)})
	require.NoError(t, err)
	return string(out.Payload), out.FunctionError != nil
}

// findLinks makes a folder pip installs greeting 1.0 from (a wheel, no
// index), and points the server's pip at it.
func findLinks(t *testing.T) {
	links := wheels(t)
	t.Setenv("PIP_FIND_LINKS", links)
	t.Setenv("PIP_NO_INDEX", "1")
}

// wheels makes a folder holding the wheel of greeting 1.0.
func wheels(t *testing.T) string {
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

func TestPythonRequirementsInstalledOnce(t *testing.T) {
	needs(t, "python3")
	findLinks(t)
	code := writeFiles(t, t.TempDir(), map[string]string{
		"requirements.txt": "greeting\n",
		"app.py":           "import greeting\ndef handler(event, context):\n    return greeting.hello(event['name'])\n",
	})
	l, err := lambda.NewLocal(nil, 0, nil)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	l.SetBuildCache(t.TempDir())
	h := &lambda.Handler{Runtime: "python3.11", Dir: code, Name: "app.handler"}
	// Two functions of one requirements.txt, put at once: one install.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, name := range []string{"one", "two"} {
		wg.Go(func() { errs[i] = l.Put(name, h) })
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.EqualValues(t, 1, l.Installs())
	got, failed := invoke(t, l, "one", `{"name": "ada"}`)
	require.False(t, failed, got)
	require.Equal(t, `"hello ada"`, got)

	// Unchanged: no install; changed: installed again.
	require.NoError(t, l.Put("one", h))
	require.EqualValues(t, 1, l.Installs())
	writeFiles(t, code, map[string]string{"requirements.txt": "greeting==1.0\n"})
	require.NoError(t, l.Put("one", h))
	require.EqualValues(t, 2, l.Installs())

	// A failed install names the function, the file and pip's words.
	writeFiles(t, code, map[string]string{"requirements.txt": "no-such-package-here\n"})
	err = l.Put("one", h)
	require.ErrorContains(t, err, "local function one: function one: install "+filepath.Join(code, "requirements.txt"))
	require.ErrorContains(t, err, "no-such-package-here")
}

func TestLayersOnThePath(t *testing.T) {
	needs(t, "python3")
	needs(t, "node")
	layer := writeFiles(t, t.TempDir(), map[string]string{
		"python/shared.py": "WORD = 'from the layer'\n",
		"python/lib/python3.11/site-packages/deep.py": "WORD = 'from site-packages'\n",
		"nodejs/node_modules/shared/index.js":         "exports.word = 'from the node layer';\n",
		"bin/layer-tool":                              "#!/bin/sh\necho tool\n",
	})
	py := writeFiles(t, t.TempDir(), map[string]string{
		"app.py": "import shared, deep, shutil\ndef handler(event, context):\n    return [shared.WORD, deep.WORD, bool(shutil.which('layer-tool'))]\n",
	})
	cjs := writeFiles(t, t.TempDir(), map[string]string{
		"app.js": "const s = require('shared');\nexports.handler = async () => s.word;\n",
	})
	esm := writeFiles(t, t.TempDir(), map[string]string{
		"app.mjs": "import s from 'shared';\nexport const handler = async () => s.word;\n",
	})
	l, err := lambda.NewLocal(nil, 0, nil)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	l.SetBuildCache(t.TempDir())
	require.NoError(t, l.Put("py", &lambda.Handler{Runtime: "python3.11", Dir: py, Name: "app.handler", Layers: []string{layer}}))
	require.NoError(t, l.Put("cjs", &lambda.Handler{Runtime: "nodejs20.x", Dir: cjs, Name: "app.handler", Layers: []string{layer}}))
	require.NoError(t, l.Put("esm", &lambda.Handler{Runtime: "nodejs20.x", Dir: esm, Name: "app.handler", Layers: []string{layer}}))
	got, failed := invoke(t, l, "py", `{}`)
	require.False(t, failed, got)
	require.JSONEq(t, `["from the layer", "from site-packages", true]`, got)
	for _, name := range []string{"cjs", "esm"} {
		got, failed := invoke(t, l, name, `{}`)
		require.False(t, failed, got)
		require.Equal(t, `"from the node layer"`, got, name)
	}
	// Without the layer the module is not there.
	require.NoError(t, l.Put("py", &lambda.Handler{Runtime: "python3.11", Dir: py, Name: "app.handler"}))
	got, failed = invoke(t, l, "py", `{}`)
	require.True(t, failed)
	require.Contains(t, got, "No module named 'shared'")
}

func TestBoto3MissingSaysHowToGetIt(t *testing.T) {
	needs(t, "python3")
	// An interpreter without its site-packages: no boto3.
	bare := writeFiles(t, t.TempDir(), map[string]string{"python": "#!/bin/sh\nexec python3 -S \"$@\"\n"})
	code := writeFiles(t, t.TempDir(), map[string]string{
		"app.py": "import boto3\ndef handler(event, context):\n    return 1\n",
	})
	l, err := lambda.NewLocal(nil, 0, nil)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	l.SetInterpreters(map[string]string{"python3.11": filepath.Join(bare, "python")})
	require.NoError(t, l.Put("fn", &lambda.Handler{Runtime: "python3.11", Dir: code, Name: "app.handler"}))
	got, failed := invoke(t, l, "fn", `{}`)
	require.True(t, failed)
	require.Contains(t, got, "Runtime.ImportModuleError")
	require.Contains(t, got, "-m pip install boto3")
	require.Contains(t, got, "serve --runtime")
}

func TestNodeBundledSDKv3(t *testing.T) {
	needs(t, "node")
	needs(t, "npm")
	moto := integrationtest.Moto(t)
	cache := t.TempDir()
	send := `{QueueUrl: url, MessageBody: 'hi'}`
	esm := writeFiles(t, t.TempDir(), map[string]string{
		"app.mjs": "import { SQSClient, CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';\n" +
			"const sqs = new SQSClient({});\n" +
			"export const handler = async (e) => {\n" +
			"  const { QueueUrl: url } = await sqs.send(new CreateQueueCommand({ QueueName: e.queue }));\n" +
			"  const r = await sqs.send(new SendMessageCommand(" + send + "));\n" +
			"  return typeof r.MessageId;\n};\n",
	})
	cjs := writeFiles(t, t.TempDir(), map[string]string{
		"app.js": "const { SQSClient, CreateQueueCommand } = require(\"@aws-sdk/client-sqs\");\n" +
			"exports.handler = async (e) => (await new SQSClient({}).send(new CreateQueueCommand({ QueueName: e.queue }))).QueueUrl.endsWith(e.queue);\n",
	})
	l, err := lambda.NewLocal(nil, 0, nil)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	l.SetEndpoints(moto, nil)
	l.SetBuildCache(cache)
	require.NoError(t, l.Put("esm", &lambda.Handler{Runtime: "nodejs20.x", Dir: esm, Name: "app.handler"}))
	require.NoError(t, l.Put("cjs", &lambda.Handler{Runtime: "nodejs20.x", Dir: cjs, Name: "app.handler"}))
	require.EqualValues(t, 1, l.Installs(), "one shared install")
	require.DirExists(t, filepath.Join(cache, "aws-sdk-js-v3", "node_modules", "@aws-sdk", "client-sqs"))
	got, failed := invoke(t, l, "esm", `{"queue": "esm-q"}`)
	require.False(t, failed, got)
	require.Equal(t, `"string"`, got)
	got, failed = invoke(t, l, "cjs", `{"queue": "cjs-q"}`)
	require.False(t, failed, got)
	require.Equal(t, `true`, got)
}

func TestNodeBundledSDKv2(t *testing.T) {
	needs(t, "node")
	needs(t, "npm")
	moto := integrationtest.Moto(t)
	cache := t.TempDir()
	code := writeFiles(t, t.TempDir(), map[string]string{
		"app.js": "const AWS = require('aws-sdk');\n" +
			"exports.handler = async (e) => (await new AWS.SQS().createQueue({ QueueName: e.queue }).promise()).QueueUrl.endsWith(e.queue);\n",
	})
	l, err := lambda.NewLocal(nil, 0, nil)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	l.SetEndpoints(moto, nil)
	l.SetBuildCache(cache)
	require.NoError(t, l.Put("v2", &lambda.Handler{Runtime: "nodejs16.x", Dir: code, Name: "app.handler"}))
	require.DirExists(t, filepath.Join(cache, "aws-sdk-js-v2", "node_modules", "aws-sdk"))
	got, failed := invoke(t, l, "v2", `{"queue": "v2-q"}`)
	require.False(t, failed, got)
	require.Equal(t, `true`, got)
}

func TestNodePackageJSONInstalled(t *testing.T) {
	needs(t, "node")
	needs(t, "npm")
	code := writeFiles(t, t.TempDir(), map[string]string{
		"package.json": `{"name": "fn", "dependencies": {"ms": "2.1.3"}}`,
		"app.mjs":      "import ms from 'ms';\nexport const handler = async () => ms('2m');\n",
	})
	l, err := lambda.NewLocal(nil, 0, nil)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	l.SetBuildCache(t.TempDir())
	require.NoError(t, l.Put("fn", &lambda.Handler{Runtime: "nodejs20.x", Dir: code, Name: "app.handler"}))
	require.NoError(t, l.Put("fn", &lambda.Handler{Runtime: "nodejs20.x", Dir: code, Name: "app.handler"}))
	require.EqualValues(t, 1, l.Installs())
	got, failed := invoke(t, l, "fn", `{}`)
	require.False(t, failed, got)
	require.Equal(t, `120000`, got)
	require.NoDirExists(t, filepath.Join(code, "node_modules"), "the code folder is left as it is")
}

// A --function handler of a declared runtime has its requirements
// installed by that runtime's --runtime interpreter, into the build
// cache set, as the registry is made.
func TestFunctionOptionInstallsWithTheRuntimesInterpreter(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	links := wheels(t)
	used := filepath.Join(t.TempDir(), "used")
	python := writeFiles(t, t.TempDir(), map[string]string{
		"python": "#!/bin/sh\necho \"$*\" >> " + used + "\nPIP_NO_INDEX=1 PIP_FIND_LINKS=" + links + " exec python3 \"$@\"\n",
	})
	code := writeFiles(t, t.TempDir(), map[string]string{
		"requirements.txt": "greeting\n",
		"app.py":           "import greeting\ndef handler(event, context):\n    return greeting.hello(event['name'])\n",
	})
	cache := t.TempDir()
	reg, err := integration.New(integration.Config{
		Functions:  map[string]string{"greet": "python3.12:" + code + ":app.handler"},
		Runtimes:   map[string]string{"python3.12": filepath.Join(python, "python")},
		BuildCache: cache,
	})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	ran, err := os.ReadFile(used)
	require.NoError(t, err, "the --runtime interpreter ran no install")
	require.Contains(t, string(ran), "-m pip install")
	installed, err := filepath.Glob(filepath.Join(cache, "python-*", "greeting.py"))
	require.NoError(t, err)
	require.Len(t, installed, 1, "installed into the build cache set")
	l := lambda.LocalOf(reg)
	require.EqualValues(t, 1, l.Installs())
	got, failed := invoke(t, l, "greet", `{"name": "ada"}`)
	require.False(t, failed, got)
	require.Equal(t, `"hello ada"`, got)
}
