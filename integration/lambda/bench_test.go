package lambda_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/slowtest"
	"stepwise/jsonvalue"
)

// The integration's overhead over what it calls: each benchmark times the
// call made directly (the stand-in's own time) and through the
// integration, and reports invocations/s and the p50/p99 latency of both.
//
//	go test -run '^$' -bench . -benchtime 200x ./integration/lambda/

func BenchmarkLambdaInvokeStandIn(b *testing.B) {
	url := integrationtest.LambdaStandIn(b)
	cfg := integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"lambda": url}}
	reg, err := integration.New(cfg)
	require.NoError(b, err)
	awsCfg, _, err := cfg.AWSConfig(context.Background(), "lambda")
	require.NoError(b, err)
	client := awslambda.NewFromConfig(awsCfg, func(o *awslambda.Options) { o.BaseEndpoint = aws.String(url) })
	createFunction(b, client, "echo", "def handler(event, context):\n    return event\n")
	params := jsonvalue.FromGo(map[string]any{"FunctionName": "echo", "Payload": map[string]any{"n": 1}})
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		measure(b, func() error {
			_, err := client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("echo"), Payload: []byte(`{"n":1}`)})
			return err
		})
	})
	b.Run("integration", func(b *testing.B) {
		measure(b, func() error {
			_, err := reg.Invoke(ctx, "arn:aws:states:::lambda:invoke", params)
			return err
		})
	})
}

func BenchmarkLocalFunctionEcho(b *testing.B) {
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Functions: map[string]string{"echo": "cat"}})
	require.NoError(b, err)
	params := jsonvalue.FromGo(map[string]any{"FunctionName": "echo", "Payload": map[string]any{"n": 1}})
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		measure(b, func() error {
			cmd := exec.Command("/bin/sh", "-c", "cat")
			cmd.Stdin = strings.NewReader(`{"n":1}`)
			_, err := cmd.Output()
			return err
		})
	})
	b.Run("integration", func(b *testing.B) {
		measure(b, func() error {
			_, err := reg.Invoke(ctx, "arn:aws:states:::lambda:invoke", params)
			return err
		})
	})
}

// measure runs call b.N times and reports invocations/s and latencies.
func measure(b *testing.B, call func() error) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	start := time.Now()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	elapsed := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "invocations/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// echoBootstrap is a provided runtime's bootstrap that answers each
// event with itself.
const echoBootstrap = `package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
)

func main() {
	api := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/invocation/"
	for {
		res, err := http.Get(api + "next")
		if err != nil {
			os.Exit(2)
		}
		event, _ := io.ReadAll(res.Body)
		res.Body.Close()
		out, err := http.Post(api+res.Header.Get("Lambda-Runtime-Aws-Request-Id")+"/response", "application/json", bytes.NewReader(event))
		if err != nil {
			os.Exit(3)
		}
		out.Body.Close()
	}
}
`

// BenchmarkLocalHandler times a warm invoke of a handler run locally:
// Python and Node.js through the shim, a provided runtime's bootstrap
// through the Runtime API (the first, cold, invoke before the timer).
//
//	STEPWISE_SLOW_TESTS=1 go test -run '^$' -bench LocalHandler -benchtime 2000x ./integration/lambda/
func BenchmarkLocalHandler(b *testing.B) {
	slowtest.Require(b, "handlers run with the host's python3, node and a built bootstrap")
	py := b.TempDir()
	require.NoError(b, os.WriteFile(filepath.Join(py, "echo.py"), []byte("def handler(event, context):\n    return event\n"), 0o644))
	node := b.TempDir()
	require.NoError(b, os.WriteFile(filepath.Join(node, "echo.js"), []byte("exports.handler = async (event) => event;\n"), 0o644))
	specs := map[string]string{"py": "python:" + py + ":echo.handler", "node": "node:" + node + ":echo.handler",
		"provided": "provided:" + buildBootstrapOf(b, echoBootstrap) + ":echo"}
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Functions: specs})
	require.NoError(b, err)
	b.Cleanup(reg.Close)
	ctx := context.Background()
	for _, name := range []string{"py", "node", "provided"} {
		if name != "provided" {
			if _, err := exec.LookPath(map[string]string{"py": "python3", "node": "node"}[name]); err != nil {
				b.Logf("%s: not on this machine", name)
				continue
			}
		}
		params := jsonvalue.FromGo(map[string]any{"FunctionName": name, "Payload": map[string]any{"n": 1}})
		b.Run(name, func(b *testing.B) {
			_, err := reg.Invoke(ctx, "arn:aws:states:::lambda:invoke", params) // the cold start
			require.NoError(b, err)
			measure(b, func() error {
				_, err := reg.Invoke(ctx, "arn:aws:states:::lambda:invoke", params)
				return err
			})
		})
	}
}
