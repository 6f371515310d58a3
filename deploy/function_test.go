package deploy

import (
	"archive/zip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/deploy/cfn"
)

// deployAt deploys a template as stack "app" with its files in base.
func (b *testBed) deployAt(t *testing.T, tmpl, base string, params map[string]string) (*Report, error) {
	t.Helper()
	tp, err := cfn.Parse([]byte(tmpl))
	require.NoError(t, err)
	return b.d.Deploy(context.Background(), tp, Options{StackName: "app", Parameters: params, BaseDir: base})
}

// codeFolder makes a folder of an app's code: src/app.py, a zip and a
// CDK asset folder. The cache goes to a test folder.
func codeFolder(t *testing.T) string {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	base := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(base, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	write("src/app.js", "exports.handler = async (e) => e;\n")
	write("asset.3f2a/index.py", "def handler(event, context):\n    return event\n")
	f, err := os.Create(filepath.Join(base, "fn.zip"))
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	w, err := zw.Create("bootstrap")
	require.NoError(t, err)
	_, err = w.Write([]byte("#!/bin/sh\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	return base
}

const functions = `
Transform: AWS::Serverless-2016-10-31
Parameters:
  InlineName: {Type: String, Default: inline-fn}
Resources:
  Inline:
    Type: AWS::Lambda::Function
    Properties:
      FunctionName: !Ref InlineName
      Runtime: python3.12
      Handler: index.handler
      Timeout: 30
      MemorySize: 256
      Environment:
        Variables: {STAGE: dev, RETRIES: 3, TARGET: !GetAtt Folder.Arn}
      Code:
        ZipFile: |
          def handler(event, context):
              return {"ok": True}
  Folder:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: src/
      Handler: app.handler
      Runtime: nodejs20.x
  Zipped:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: fn.zip
      Handler: bootstrap
      Runtime: provided.al2023
  Asset:
    Type: AWS::Lambda::Function
    Metadata:
      aws:cdk:path: App/Asset/Resource
      aws:asset:path: asset.3f2a
      aws:asset:is-bundled: false
      aws:asset:property: Code
    Properties:
      Runtime: python3.13
      Handler: index.handler
      Code:
        S3Bucket: !Sub cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}
        S3Key: 3f2a.zip
  Live:
    Type: AWS::Lambda::Version
    Properties: {FunctionName: !Ref Asset}
  Prod:
    Type: AWS::Lambda::Alias
    Properties: {FunctionName: !Ref Asset, FunctionVersion: !GetAtt Live.Version, Name: prod}
  Invoke:
    Type: AWS::Lambda::Permission
    Properties: {FunctionName: !Ref Asset, Action: lambda:InvokeFunction, Principal: states.amazonaws.com}
Outputs:
  InlineName: {Value: !Ref Inline}
  FolderArn: {Value: !GetAtt Folder.Arn}
  VersionArn: {Value: !Ref Live}
  AliasArn: {Value: !Ref Prod}
`

func outputs(r *Report) map[string]string {
	out := map[string]string{}
	for _, o := range r.Outputs {
		out[o.Key] = o.Value
	}
	return out
}

func TestFunctionsFromInlineCodeAFolderAZipAndACDKAsset(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()
	base := codeFolder(t)

	r, err := b.deployAt(t, functions, base, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Asset created", "Folder created", "Inline created", "Invoke skipped", "Live created", "Prod created", "Zipped created"}, actions(r))
	require.Empty(t, r.Warnings, "a permission is skipped quietly")
	require.Equal(t, map[string]string{
		"InlineName": "inline-fn",
		"FolderArn":  "arn:aws:lambda:us-east-1:123456789012:function:app-Folder",
		"VersionArn": "arn:aws:lambda:us-east-1:123456789012:function:app-Asset:1",
		"AliasArn":   "arn:aws:lambda:us-east-1:123456789012:function:app-Asset:prod",
	}, outputs(r))

	require.Len(t, b.fns.fns, 4)
	inline := b.fns.fns["inline-fn"]
	require.Equal(t, "python3.12", inline.Runtime)
	require.Equal(t, "index.handler", inline.Handler)
	require.Equal(t, 30*time.Second, inline.Timeout)
	require.Equal(t, 256, inline.MemoryMB)
	require.Equal(t, map[string]string{"STAGE": "dev", "RETRIES": "3", "TARGET": "arn:aws:lambda:us-east-1:123456789012:function:app-Folder"}, inline.Env)
	src, err := os.ReadFile(filepath.Join(inline.Code, "index.py"))
	require.NoError(t, err, "inline code is written to index.py in a folder of the cache")
	require.Equal(t, "def handler(event, context):\n    return {\"ok\": True}\n", string(src))
	require.True(t, strings.HasPrefix(inline.Code, os.Getenv("XDG_CACHE_HOME")), inline.Code)

	folder := b.fns.fns["app-Folder"]
	require.Equal(t, filepath.Join(base, "src"), folder.Code)
	require.Equal(t, 3*time.Second, folder.Timeout, "Lambda's default timeout")
	require.Equal(t, 128, folder.MemoryMB)
	require.Nil(t, folder.Env)
	require.Equal(t, filepath.Join(base, "fn.zip"), b.fns.fns["app-Zipped"].Code)
	require.Equal(t, "provided.al2023", b.fns.fns["app-Zipped"].Runtime)
	require.Equal(t, filepath.Join(base, "asset.3f2a"), b.fns.fns["app-Asset"].Code, "a CDK asset is read from its folder, not S3")

	// The same template again: nothing is put again.
	b.fns.fns = map[string]*Function{}
	puts := b.records.puts
	r, err = b.deployAt(t, functions, base, nil)
	require.NoError(t, err)
	require.False(t, r.Changed(), "%v", actions(r))
	require.Empty(t, b.fns.fns)
	require.Equal(t, puts, b.records.puts)

	// Restore puts the recorded functions back (a server's restart).
	require.NoError(t, b.d.Restore(ctx))
	require.Len(t, b.fns.fns, 4)
	require.Equal(t, inline, b.fns.fns["inline-fn"])

	// Code edited in its folder: that function is put again.
	require.NoError(t, os.WriteFile(filepath.Join(base, "src", "app.js"), []byte("exports.handler = async () => 2;\n"), 0o644))
	r, err = b.deployAt(t, functions, base, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Asset unchanged", "Folder updated", "Inline unchanged", "Invoke skipped", "Live unchanged", "Prod unchanged", "Zipped unchanged"}, actions(r))

	// A new name: the function is put under it, the old one deleted.
	r, err = b.deployAt(t, functions, base, map[string]string{"InlineName": "renamed"})
	require.NoError(t, err)
	require.Contains(t, actions(r), "Inline replaced")
	require.NotContains(t, b.fns.fns, "inline-fn")
	require.Contains(t, b.fns.fns, "renamed")

	// Gone from the template: deleted; then the stack.
	r, err = b.deployAt(t, "Resources:\n  Folder: {Type: AWS::Serverless::Function, Properties: {CodeUri: src, Handler: app.handler, Runtime: nodejs20.x}}\n", base, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Folder unchanged", "Zipped deleted", "Prod deleted", "Live deleted", "Invoke deleted", "Inline deleted", "Asset deleted"}, actions(r))
	require.Equal(t, []string{"app-Folder"}, sortedKeys(b.fns.fns))
	_, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Empty(t, b.fns.fns)
}

func TestFunctionVersionsCount(t *testing.T) {
	b := newTestBed(t)
	base := codeFolder(t)
	tmpl := `
Parameters:
  Desc: {Type: String, Default: one}
Resources:
  Fn: {Type: AWS::Serverless::Function, Properties: {CodeUri: src, Handler: app.handler, Runtime: nodejs22.x}}
  V: {Type: AWS::Lambda::Version, Properties: {FunctionName: !GetAtt Fn.Arn, Description: !Ref Desc}}
Outputs:
  V: {Value: !GetAtt V.Version}
`
	r, err := b.deployAt(t, tmpl, base, nil)
	require.NoError(t, err)
	require.Equal(t, "1", outputs(r)["V"])
	r, err = b.deployAt(t, tmpl, base, nil)
	require.NoError(t, err)
	require.Equal(t, "1", outputs(r)["V"])
	r, err = b.deployAt(t, tmpl, base, map[string]string{"Desc": "two"})
	require.NoError(t, err)
	require.Equal(t, "2", outputs(r)["V"], "new properties publish a new version")
	require.Contains(t, actions(r), "V replaced")
}

func TestFunctionErrorsNameTheResource(t *testing.T) {
	b := newTestBed(t)
	base := codeFolder(t)
	for _, c := range []struct{ props, want string }{
		{`{Runtime: java21, Handler: a.B, CodeUri: src}`,
			"resource Fn (AWS::Serverless::Function): Properties.Runtime: runtime java21 does not run here; the runtimes that do: python3.x (python3.7 ... python3.14), nodejsN.x (nodejs12.x ... nodejs24.x), provided, provided.al2, provided.al2023"},
		{`{Runtime: python2.7, Handler: a.b, CodeUri: src}`, "runtime python2.7 does not run here"},
		{`{Handler: a.b, CodeUri: src}`, "Properties.Runtime: no Runtime"},
		{`{Runtime: python3.12, CodeUri: src}`, "Properties.Handler: a python3.12 function needs a Handler"},
		{`{Runtime: python3.12, Handler: a.b, CodeUri: nowhere}`, "Properties.CodeUri: nowhere does not exist (read from " + base + ")"},
		{`{Runtime: python3.12, Handler: a.b, CodeUri: src/app.js}`, "Properties.CodeUri: src/app.js is neither a folder nor a .zip file"},
		{`{Runtime: python3.12, Handler: a.b}`, "Properties.CodeUri: a function needs its code"},
		{`{Runtime: python3.12, Handler: a.b, CodeUri: s3://bucket/code.zip}`, "Properties.CodeUri: the code is at s3://bucket/code.zip and no AWS endpoint is set\nhint: pass --aws-endpoint"},
		{`{Runtime: provided.al2, InlineCode: "echo"}`, "Properties.InlineCode: inline code runs with the python3.x and nodejs runtimes, not provided.al2"},
		{`{Runtime: python3.12, Handler: a.b, CodeUri: src, Timeout: 0}`, "Properties.Timeout: 0 seconds: between 1 and 900"},
		{`{Runtime: python3.12, Handler: a.b, CodeUri: src, Timeout: soon}`, `Properties.Timeout: a whole number, not "soon"`},
		{`{Runtime: python3.12, Handler: a.b, CodeUri: src, Environment: {Variables: {A: [1]}}}`, "Properties.Environment.Variables.A: a string, not a list"},
	} {
		_, err := b.deployAt(t, "Resources:\n  Fn: {Type: AWS::Serverless::Function, Properties: "+c.props+"}\n", base, nil)
		require.ErrorContains(t, err, c.want, c.props)
	}
	_, err := b.deployAt(t, "Resources:\n  Fn: {Type: AWS::Lambda::Function, Properties: {Runtime: python3.12, Handler: a.b, Code: {S3Bucket: b, S3Key: k.zip}}}\n", base, nil)
	require.ErrorContains(t, err, "resource Fn (AWS::Lambda::Function): Properties.Code: the code is at s3://b/k.zip and no AWS endpoint is set")
	_, err = b.deployAt(t, "Resources:\n  Fn: {Type: AWS::Lambda::Function, Metadata: {aws:asset:path: asset.gone}, Properties: {Runtime: python3.12, Handler: a.b, Code: {S3Bucket: b, S3Key: k.zip}}}\n", base, nil)
	require.ErrorContains(t, err, `resource Fn (AWS::Lambda::Function): Metadata."aws:asset:path": asset.gone does not exist`)
}

func TestFunctionsSkippedAndSAMWarnings(t *testing.T) {
	b := newTestBed(t)
	base := codeFolder(t)
	r, err := b.deployAt(t, `
Resources:
  Image: {Type: AWS::Serverless::Function, Properties: {PackageType: Image, ImageUri: repo/fn:1}}
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: src
      Handler: app.handler
      Runtime: nodejs18.x
      AutoPublishAlias: live
      Policies: [AWSLambdaBasicExecutionRole]
      Layers: [arn:aws:lambda:us-east-1:123456789012:layer:deps:1]
      Events:
        Stream: {Type: Kinesis, Properties: {Stream: arn:aws:kinesis:us-east-1:123456789012:stream/s, StartingPosition: LATEST}}
`, base, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Fn created", "Image skipped"}, actions(r))
	require.Len(t, r.Warnings, 4)
	require.Contains(t, r.Warnings[0], "Fn (AWS::Serverless::Function): AutoPublishAlias live is accepted, not published")
	require.Contains(t, r.Warnings[1], "Fn (AWS::Serverless::Function): layer arn:aws:lambda:us-east-1:123456789012:layer:deps:1 is not available locally")
	require.Contains(t, r.Warnings[2], "Fn (AWS::Serverless::Function): event Stream of type Kinesis is not delivered here")
	require.Contains(t, r.Warnings[3], "Image (AWS::Serverless::Function) is a container image function: only zip functions run here")

	// A server without local functions names them.
	b.d.Functions = nil
	r, err = b.deployAt(t, "Resources:\n  Fn: {Type: AWS::Serverless::Function, Properties: {CodeUri: src, Handler: app.handler, Runtime: nodejs18.x}}\n", base, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Fn skipped", "Image deleted"}, actions(r))
	require.Equal(t, []string{"Fn (AWS::Serverless::Function) is not run here: this server has no local functions; Ref gives app-Fn"}, r.Warnings)
}

// notedFunctions are local functions whose interpreters are not the
// declared versions.
type notedFunctions struct{ *memFunctions }

func (notedFunctions) VersionNote(runtime string) string {
	if runtime == "nodejs22.x" {
		return ""
	}
	return "declared " + runtime + ", runs on the host's python3.11"
}

// Every Python 3 and Node.js runtime runs, deprecated ones included; a
// declared version that is not the interpreter's is warned of.
func TestFunctionRuntimesRunOnTheHostsInterpreter(t *testing.T) {
	b := newTestBed(t)
	b.d.Functions = notedFunctions{b.fns}
	base := codeFolder(t)
	r, err := b.deployAt(t, `Resources:
  Old: {Type: AWS::Serverless::Function, Properties: {CodeUri: src, Handler: app.handler, Runtime: nodejs14.x}}
  Py: {Type: AWS::Serverless::Function, Properties: {CodeUri: src, Handler: app.handler, Runtime: python3.7}}
  New: {Type: AWS::Serverless::Function, Properties: {CodeUri: src, Handler: app.handler, Runtime: nodejs22.x}}
`, base, nil)
	require.NoError(t, err)
	runtimes := map[string]string{}
	for _, f := range b.fns.fns {
		runtimes[f.Runtime] = f.Handler
	}
	require.Len(t, runtimes, 3, "every function is put")
	require.Contains(t, runtimes, "nodejs14.x")
	require.ElementsMatch(t, []string{
		"Old (AWS::Serverless::Function): declared nodejs14.x, runs on the host's python3.11",
		"Py (AWS::Serverless::Function): declared python3.7, runs on the host's python3.11",
	}, r.Warnings)
}
