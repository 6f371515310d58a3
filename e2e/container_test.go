package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"
)

// The region and account the container serves, from Step Functions
// Local's env file.
const (
	containerRegion  = "eu-west-1"
	containerAccount = "111122223333"
)

// sfnLocalEnvFile writes an env file of Step Functions Local's (as
// amazon/aws-stepfunctions-local reads it) with waits scaled by scale.
func sfnLocalEnvFile(t *testing.T, scale string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "aws-stepfunctions-local-credentials.txt")
	require.NoError(t, os.WriteFile(p, []byte("AWS_DEFAULT_REGION="+containerRegion+"\n"+
		"AWS_ACCOUNT_ID="+containerAccount+"\n"+
		"LAMBDA_ENDPOINT=http://lambda.invalid:9001\n"+
		"SQS_ENDPOINT=http://sqs.invalid:9324\n"+
		"WAIT_TIME_SCALE="+scale+"\n"), 0o644))
	return p
}

// needPodman skips a test without podman (fails it on CI, where
// scripts/install-podman.sh installs it).
func needPodman(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("podman"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("podman is required on CI (scripts/install-podman.sh installs it)")
		}
		t.Skip("podman is not on PATH; run scripts/install-podman.sh to run this test")
	}
}

// podman runs podman with args and returns its standard output, failing t
// with its standard error if it fails.
func podman(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command("podman", args...).Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "podman %s: %s", strings.Join(args, " "), stderr)
	return strings.TrimSpace(string(out))
}

// containerImage is the image scripts/build-image.sh builds, loaded into
// podman once per test run: its tag, or the error.
var containerImage = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "stepwise-image")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	archive := filepath.Join(dir, "stepwise-image.tar")
	tag := fmt.Sprintf("localhost/stepwise:e2e-%d", os.Getpid())
	// This machine's platform only, to keep the test quick.
	build := exec.Command("../scripts/build-image.sh")
	build.Env = append(os.Environ(), "OUT="+archive, "TAG="+tag, "PLATFORMS=linux/"+runtime.GOARCH, "VERSION=e2e")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("scripts/build-image.sh: %v\n%s", err, out)
	}
	if out, err := exec.Command("podman", "load", "-i", archive).CombinedOutput(); err != nil {
		return "", fmt.Errorf("podman load: %v\n%s", err, out)
	} else if !strings.Contains(string(out), tag) {
		return "", fmt.Errorf("podman load did not load %s:\n%s", tag, out)
	}
	return tag, nil
})

// freePort is a TCP port of 127.0.0.1 nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// container is the image run by podman on a volume, published on
// 127.0.0.1:port.
type container struct {
	t       *testing.T
	image   string
	name    string
	volume  string
	port    int
	envFile string
	extra   []string // more podman run options
}

// run starts the container (a new one, on the same volume) and waits for
// it to be ready.
func (c *container) run() {
	c.t.Helper()
	args := []string{"run", "-d", "--name", c.name,
		"-p", fmt.Sprintf("127.0.0.1:%d:8083", c.port),
		"-v", c.volume + ":/data"}
	if c.envFile != "" {
		args = append(args, "--env-file", c.envFile)
	}
	args = append(args, c.extra...)
	podman(c.t, append(args, c.image)...)
	c.waitReady()
}

// remove removes the container, whatever its state.
func (c *container) remove() {
	exec.Command("podman", "rm", "-f", "-t", "0", c.name).Run()
}

func (c *container) url() string { return fmt.Sprintf("http://127.0.0.1:%d", c.port) }

func (c *container) waitReady() {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(c.url() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			logs, _ := exec.Command("podman", "logs", c.name).CombinedOutput()
			c.t.Fatalf("the container %s is not ready after 30s (%v); its log:\n%s", c.name, err, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// aws runs `aws stepfunctions` against the container and returns its JSON
// output.
func (c *container) aws(args ...string) map[string]any {
	c.t.Helper()
	cmd := exec.Command("aws", append([]string{"stepfunctions", "--endpoint-url", c.url(), "--output", "json"}, args...)...)
	cmd.Env = append(os.Environ(),
		"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=secret", "AWS_DEFAULT_REGION="+containerRegion,
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(c.t, err, "aws %v: %s", args, stderr)
	var v map[string]any
	require.NoError(c.t, json.Unmarshal(out, &v), "aws %v printed %q", args, out)
	return v
}

// client is an SDK client of the container's API.
func (c *container) client() *sfn.Client {
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion(containerRegion),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")),
		config.WithRetryMaxAttempts(1),
	)
	require.NoError(c.t, err)
	return sfn.NewFromConfig(cfg, func(o *sfn.Options) { o.BaseEndpoint = aws.String(c.url()) })
}

// TestContainerImage runs the image scripts/build-image.sh builds as a
// user runs it, with podman: on a volume, driven by the AWS CLI; stopped
// and started again, then killed (SIGKILL) right after executions were
// acknowledged and started again, nothing lost; read-only; its health
// check.
func TestContainerImage(t *testing.T) {
	t.Parallel()
	needPodman(t)
	needAWSCLI(t)
	image, err := containerImage()
	require.NoError(t, err)
	t.Cleanup(func() { exec.Command("podman", "rmi", "-f", image, image+"-"+runtime.GOARCH).Run() })

	id := fmt.Sprintf("stepwise-e2e-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	volume := podman(t, "volume", "create", id)
	t.Cleanup(func() { exec.Command("podman", "volume", "rm", "-f", volume).Run() })
	// Waits take no time, as in a test suite using Step Functions Local.
	c := &container{t: t, image: image, name: id, volume: volume, port: freePort(t), envFile: sfnLocalEnvFile(t, "0")}
	t.Cleanup(c.remove)
	c.run()

	// The image's configuration, as podman reads it.
	var inspected []struct {
		Config struct {
			User        string
			Healthcheck struct {
				Test     []string
				Interval int64
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(podman(t, "inspect", "--type", "container", c.name)), &inspected))
	require.Len(t, inspected, 1)
	require.Equal(t, "65532:65532", inspected[0].Config.User)
	require.Equal(t, []string{"CMD", "/usr/local/bin/stepwise", "health"}, inspected[0].Config.Healthcheck.Test)
	require.Equal(t, int64(10*time.Second), inspected[0].Config.Healthcheck.Interval)
	// Step Functions Local's variables were read, and container mode warns
	// that the port is open.
	logs, err := exec.Command("podman", "logs", c.name).CombinedOutput()
	require.NoError(t, err)
	require.Contains(t, string(logs), "AWS_ACCOUNT_ID, AWS_DEFAULT_REGION, WAIT_TIME_SCALE, LAMBDA_ENDPOINT, SQS_ENDPOINT")
	require.Contains(t, string(logs), "without --credentials the API is open to whoever reaches the port the container publishes")
	// The health check, run by hand (its timer needs systemd).
	podman(t, "healthcheck", "run", c.name)
	// The server runs as the image's user, not root.
	require.Equal(t, "USER\nstepwise", podman(t, "top", c.name, "user"))

	def := filepath.Join(t.TempDir(), "def.json")
	require.NoError(t, os.WriteFile(def, []byte(`{"StartAt": "Hello", "States": {
		"Hello": {"Type": "Pass", "Parameters": {"greeting.$": "States.Format('Hello, {}!', $.name)", "nap.$": "$.nap"}, "Next": "Nap"},
		"Nap": {"Type": "Wait", "SecondsPath": "$.nap", "OutputPath": "$.greeting", "End": true}}}`), 0o644))
	created := c.aws("create-state-machine", "--name", "hello", "--definition", "file://"+def, "--role-arn", roleArn)
	smArn := created["stateMachineArn"].(string)
	require.Equal(t, "arn:aws:states:"+containerRegion+":"+containerAccount+":stateMachine:hello", smArn)
	started := c.aws("start-execution", "--state-machine-arn", smArn, "--name", "first", "--input", `{"name": "Ada", "nap": 3600}`)
	first := started["executionArn"].(string)
	require.Equal(t, "arn:aws:states:"+containerRegion+":"+containerAccount+":execution:hello:first", first)
	// WAIT_TIME_SCALE=0: the hour's wait takes no time (waitDone gives up
	// after a minute).
	waitDone(t, c.client(), first)
	described := c.aws("describe-execution", "--execution-arn", first)
	require.Equal(t, "SUCCEEDED", described["status"])
	require.JSONEq(t, `"Hello, Ada!"`, described["output"].(string))

	// Stopped (SIGTERM) and run again on the volume: all there.
	podman(t, "stop", "-t", "20", c.name)
	podman(t, "rm", c.name)
	c.run()
	require.Equal(t, "SUCCEEDED", c.aws("describe-execution", "--execution-arn", first)["status"])
	require.Equal(t, "hello", c.aws("describe-state-machine", "--state-machine-arn", smArn)["name"])

	// Killed right after executions were acknowledged (their waits real
	// now, so they are running): every one is there once the container
	// runs again, and completes.
	podman(t, "stop", "-t", "20", c.name)
	podman(t, "rm", c.name)
	c.envFile = sfnLocalEnvFile(t, "1")
	c.run()
	client := c.client()
	var arns []string
	for i := range 8 {
		out, err := client.StartExecution(context.Background(), &sfn.StartExecutionInput{
			StateMachineArn: aws.String(smArn), Name: aws.String(fmt.Sprintf("killed-%d", i)), Input: aws.String(`{"name": "Bo", "nap": 2}`)})
		require.NoError(t, err)
		arns = append(arns, aws.ToString(out.ExecutionArn))
	}
	podman(t, "kill", "-s", "KILL", c.name)
	podman(t, "rm", "-f", c.name)
	c.run()
	client = c.client()
	for _, arn := range arns {
		out := waitDone(t, client, arn)
		require.Equal(t, "SUCCEEDED", string(out.Status), arn)
		require.JSONEq(t, `"Hello, Bo!"`, aws.ToString(out.Output), arn)
	}
	podman(t, "stop", "-t", "20", c.name)
	podman(t, "rm", c.name)

	// A read-only root file system: it serves and writes to the volume.
	c.envFile = sfnLocalEnvFile(t, "0")
	c.extra = []string{"--read-only"}
	c.run()
	require.Equal(t, "true", podman(t, "inspect", "--format", "{{.HostConfig.ReadonlyRootfs}}", c.name))
	ro := c.aws("start-execution", "--state-machine-arn", smArn, "--name", "read-only", "--input", `{"name": "Cy", "nap": 60}`)
	out := waitDone(t, c.client(), ro["executionArn"].(string))
	require.Equal(t, "SUCCEEDED", string(out.Status))
	podman(t, "healthcheck", "run", c.name)
}
