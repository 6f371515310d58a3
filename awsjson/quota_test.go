package awsjson_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"stepwise/awsjson"
	"stepwise/internal/security/quota"
)

// quotaBundle is a handler with quotas, over a state machine to start.
type quotaBundle struct {
	*testBundle
	quotas *quota.Quotas
	smArn  string

	mu        sync.Mutex
	throttled []string
	consumed  map[string]float64
}

func setupQuotas(t *testing.T, limits map[string]quota.Limit) *quotaBundle {
	t.Helper()
	b := &quotaBundle{testBundle: setup(t), quotas: quota.New(limits), consumed: map[string]float64{}}
	b.quotas.OnThrottle = func(op string) { b.mu.Lock(); b.throttled = append(b.throttled, op); b.mu.Unlock() }
	b.quotas.OnConsume = func(op string, n float64) { b.mu.Lock(); b.consumed[op] += n; b.mu.Unlock() }
	b.handler = awsjson.NewWith(b.svc, awsjson.Options{Quotas: b.quotas})
	created := b.mustCall(t, "CreateStateMachine", map[string]any{"name": "q", "definition": passDefinition, "roleArn": roleArn})
	b.smArn = created["stateMachineArn"].(string)
	return b
}

func TestQuotaThrottles(t *testing.T) {
	t.Parallel()
	b := setupQuotas(t, map[string]quota.Limit{"StartExecution": {Bucket: 2, Refill: 0.001}})

	for range 2 {
		b.mustCall(t, "StartExecution", map[string]any{"stateMachineArn": b.smArn})
	}
	res := b.call(t, "StartExecution", map[string]any{"stateMachineArn": b.smArn, "name": "refused"})
	require.Equal(t, http.StatusBadRequest, res.status)
	typ, msg := res.errorType(t)
	require.Equal(t, "com.amazon.coral.availability#ThrottlingException", typ)
	require.Equal(t, "Rate exceeded", msg)
	after, err := strconv.Atoi(res.header.Get("x-amz-retry-after"))
	require.NoError(t, err)
	require.Greater(t, after, 900_000, "a token comes back after 1000 s")
	require.NotEmpty(t, res.header.Get("x-amzn-RequestId"))

	// The refused request did not run; other operations have no quota.
	list := b.mustCall(t, "ListExecutions", map[string]any{"stateMachineArn": b.smArn})
	require.Len(t, list["executions"], 2)
	for range 5 {
		b.mustCall(t, "DescribeStateMachine", map[string]any{"stateMachineArn": b.smArn})
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	require.Equal(t, []string{"StartExecution"}, b.throttled)
	require.Equal(t, map[string]float64{"StartExecution": 2}, b.consumed)
}

func TestQuotaBeforeDecoding(t *testing.T) {
	t.Parallel()
	b := setupQuotas(t, map[string]quota.Limit{"DescribeExecution": {Bucket: 1, Refill: 0.001}})
	res := b.do(t, newRequest(awsjson.TargetPrefix+"DescribeExecution", []byte(`not json`)))
	require.Equal(t, http.StatusBadRequest, res.status)
	typ, _ := res.errorType(t)
	require.Equal(t, "com.amazon.coral.service#SerializationException", typ, "the first request takes the token")

	res = b.do(t, newRequest(awsjson.TargetPrefix+"DescribeExecution", []byte(`not json`)))
	typ, _ = res.errorType(t)
	require.Equal(t, "com.amazon.coral.availability#ThrottlingException", typ, "the quota comes before the body is read")
}

// sdkClient is an AWS SDK client for h; maxAttempts 0 keeps the SDK's
// default retries.
func sdkClient(t *testing.T, h http.Handler, maxAttempts int) *sfn.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	opts := []func(*config.LoadOptions) error{
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")),
	}
	if maxAttempts > 0 {
		opts = append(opts, config.WithRetryMaxAttempts(maxAttempts))
	}
	cfg, err := config.LoadDefaultConfig(t.Context(), opts...)
	require.NoError(t, err)
	return sfn.NewFromConfig(cfg, func(o *sfn.Options) { o.BaseEndpoint = aws.String(srv.URL) })
}

func TestQuotaSDKRetriesThrottling(t *testing.T) {
	t.Parallel()

	t.Run("ClassifiedAsThrottling", func(t *testing.T) {
		t.Parallel()
		b := setupQuotas(t, map[string]quota.Limit{"StartExecution": {Bucket: 1, Refill: 0.001}})
		client := sdkClient(t, b.handler, 1)
		_, err := client.StartExecution(t.Context(), &sfn.StartExecutionInput{StateMachineArn: &b.smArn})
		require.NoError(t, err)
		_, err = client.StartExecution(t.Context(), &sfn.StartExecutionInput{StateMachineArn: &b.smArn})
		apiErr := requireErrorAs[smithy.APIError](t, err)
		require.Equal(t, "ThrottlingException", apiErr.ErrorCode())
		require.Equal(t, "Rate exceeded", apiErr.ErrorMessage())
		require.Equal(t, http.StatusBadRequest, requireErrorAs[*awshttp.ResponseError](t, err).HTTPStatusCode())
		// What the SDK's standard retryer asks of an error.
		require.Equal(t, aws.TrueTernary, retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err))
		require.Equal(t, aws.TrueTernary, retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err))
	})

	t.Run("DefaultRetriesSucceed", func(t *testing.T) {
		t.Parallel()
		b := setupQuotas(t, map[string]quota.Limit{"StartExecution": {Bucket: 2, Refill: 4}})
		client := sdkClient(t, b.handler, 0)
		for i := range 4 {
			_, err := client.StartExecution(t.Context(), &sfn.StartExecutionInput{StateMachineArn: &b.smArn})
			require.NoError(t, err, "start %d", i+1)
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		require.NotEmpty(t, b.throttled, "some starts were throttled, then retried")
		require.Equal(t, map[string]float64{"StartExecution": 4}, b.consumed)
	})
}
