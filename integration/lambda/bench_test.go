package lambda_test

import (
	"context"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/integration/integrationtest"
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
