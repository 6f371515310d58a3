package lambda_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/integration/lambda"
	"stepwise/jsonvalue"
)

// The server's secrets, in the environment of this test process as they
// would be in a server's, before any function is made.
func init() {
	os.Setenv("STEPWISE_TEST_SECRET", "hunter2")
	os.Setenv("AWS_SECRET_ACCESS_KEY", "the-servers-own-key")
	os.Setenv("PGPASSWORD", "the-databases-password")
}

const envHandler = `
import os
def handler(event, context):
    return dict(os.environ)
`

// environOf is a function's environment as it dumped it.
func environOf(t *testing.T, out any) map[string]string {
	t.Helper()
	obj, ok := out.(*jsonvalue.Object)
	require.True(t, ok, "%s", jsonvalue.String(out))
	env := map[string]string{}
	for k, v := range obj.All() {
		env[k], _ = v.(string)
	}
	return env
}

// A function sees the server's PATH and its own Environment, never the
// server's other variables; with an AWS endpoint it gets that endpoint
// and local credentials, not the server's keys.
func TestFunctionEnvironment(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": envHandler})
	for _, endpoint := range []string{"", "http://127.0.0.1:5000"} {
		var endpoints map[string]string
		if endpoint != "" {
			endpoints = map[string]string{"lambda": "http://127.0.0.1:1"}
		}
		reg, err := integration.New(integration.Config{Region: "eu-west-1", Account: "123456789012", Endpoint: endpoint, Endpoints: endpoints,
			Functions: map[string]string{"cmd": `python3 -c 'import json, os; print(json.dumps(dict(os.environ)))'`}})
		require.NoError(t, err)
		t.Cleanup(reg.Close)
		require.NoError(t, lambda.LocalOf(reg).Put("handler", &lambda.Handler{Runtime: "python3.12", Dir: dir, Name: "app.handler",
			Env: map[string]string{"TABLE": "Orders", "PATH": "/opt/own:" + os.Getenv("PATH")}}))

		for _, name := range []string{"cmd", "handler"} {
			res := run(t, reg, "arn:aws:lambda:eu-west-1:123456789012:function:"+name, `{}`)
			require.Nil(t, res.Failure, "%+v", res.Failure)
			env := environOf(t, res.Output)
			for _, secret := range []string{"STEPWISE_TEST_SECRET", "PGPASSWORD"} {
				require.NotContains(t, env, secret, name)
			}
			require.NotEqual(t, "the-servers-own-key", env["AWS_SECRET_ACCESS_KEY"], name)
			require.Equal(t, name, env["AWS_LAMBDA_FUNCTION_NAME"])
			require.Equal(t, "eu-west-1", env["AWS_REGION"])
			require.Equal(t, "/dev/null", env["AWS_SHARED_CREDENTIALS_FILE"], name)
			require.Equal(t, "/dev/null", env["AWS_CONFIG_FILE"], name)
			require.Equal(t, "true", env["AWS_EC2_METADATA_DISABLED"], name)
			if name == "handler" {
				require.Equal(t, "Orders", env["TABLE"], "its own Environment")
				// (A python3 of pyenv puts its own folders first.)
				require.Contains(t, env["PATH"], "/opt/own:"+os.Getenv("PATH"), "its own Environment comes last")
				require.Equal(t, "app.handler", env["_HANDLER"])
			} else {
				require.Contains(t, env["PATH"], os.Getenv("PATH"))
			}
			if endpoint == "" {
				require.NotContains(t, env, "AWS_ACCESS_KEY_ID", name)
				require.NotContains(t, env, "AWS_SECRET_ACCESS_KEY", name)
				require.NotContains(t, env, "AWS_ENDPOINT_URL", name)
				continue
			}
			require.Equal(t, endpoint, env["AWS_ENDPOINT_URL"], name)
			require.Equal(t, "http://127.0.0.1:1", env["AWS_ENDPOINT_URL_LAMBDA"], name)
			require.Equal(t, integration.LocalAccessKeyID, env["AWS_ACCESS_KEY_ID"], name)
			require.Equal(t, integration.LocalSecretAccessKey, env["AWS_SECRET_ACCESS_KEY"], name)
		}
	}
}

// An AWS SDK in a function finds none of the credentials of the server's
// user (~/.aws/credentials, ~/.aws/config) nor of its machine (an
// instance metadata service); a function whose own Environment names a
// credentials file gets it.
func TestFunctionNoOperatorCredentials(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o700))
	creds := filepath.Join(home, ".aws", "credentials")
	require.NoError(t, os.WriteFile(creds, []byte("[default]\naws_access_key_id = AKIAOPERATOR\naws_secret_access_key = operators-secret\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".aws", "config"), []byte("[default]\nregion = eu-central-1\n"), 0o600))
	boto3 := exec.Command("python3", "-c", "import boto3").Run() == nil
	dir := handlerDir(t, map[string]string{"app.py": `
import os
def handler(event, context):
    out = {"env": dict(os.environ)}
    try:
        import boto3
    except ImportError:
        return out
    c = boto3.Session().get_credentials()
    out["key"] = c.access_key if c else None
    return out
`})
	// No endpoint: no credentials of Stepwise's either.
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Functions: map[string]string{}})
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	local := lambda.LocalOf(reg)
	// The server's user's home, as HOME is passed on.
	require.NoError(t, local.Put("h", &lambda.Handler{Runtime: "python3.12", Dir: dir, Name: "app.handler",
		Env: map[string]string{"HOME": home}}))
	require.NoError(t, local.Put("own", &lambda.Handler{Runtime: "python3.12", Dir: dir, Name: "app.handler",
		Env: map[string]string{"HOME": home, "AWS_SHARED_CREDENTIALS_FILE": creds}}))

	res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:h", `{}`)
	require.Nil(t, res.Failure, "%+v", res.Failure)
	env := environOf(t, get(t, res.Output, "env"))
	require.Equal(t, home, env["HOME"])
	require.Equal(t, "/dev/null", env["AWS_SHARED_CREDENTIALS_FILE"])
	require.Equal(t, "/dev/null", env["AWS_CONFIG_FILE"])
	require.Equal(t, "true", env["AWS_EC2_METADATA_DISABLED"])
	if boto3 {
		require.Nil(t, get(t, res.Output, "key"), "boto3 finds no credentials")
	}

	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:own", `{}`)
	require.Nil(t, res.Failure, "%+v", res.Failure)
	require.Equal(t, creds, environOf(t, get(t, res.Output, "env"))["AWS_SHARED_CREDENTIALS_FILE"], "its own Environment wins")
	if boto3 {
		require.Equal(t, "AKIAOPERATOR", get(t, res.Output, "key"))
	}
}
