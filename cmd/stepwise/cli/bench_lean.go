package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// benchCaller makes the load generator's hot calls: the SDK for Go's
// client (--sdk-client) or a lean one that speaks the same wire with less
// CPU, so that the load generator measures the server more than itself.
type benchCaller interface {
	// startExecution starts an execution and returns its ARN.
	startExecution(ctx context.Context, arn, name, input string) (string, error)
	// executionStatus describes an execution and returns its status.
	executionStatus(ctx context.Context, executionArn string) (string, error)
	// startSync runs a StartSyncExecution call and returns its status.
	startSync(ctx context.Context, arn, input string) (string, error)
}

// sdkCaller makes the hot calls with the AWS SDK for Go.
type sdkCaller struct{ c *sfn.Client }

func (s sdkCaller) startExecution(ctx context.Context, arn, name, input string) (string, error) {
	out, err := s.c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arn), Name: aws.String(name), Input: aws.String(input)})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.ExecutionArn), nil
}

func (s sdkCaller) executionStatus(ctx context.Context, executionArn string) (string, error) {
	out, err := s.c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(executionArn)})
	if err != nil {
		return "", err
	}
	return string(out.Status), nil
}

func (s sdkCaller) startSync(ctx context.Context, arn, input string) (string, error) {
	out, err := s.c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(arn), Input: aws.String(input)})
	if err != nil {
		return "", err
	}
	return string(out.Status), nil
}

// leanCaller makes the hot calls with net/http alone: a POST in the AWS
// JSON 1.0 protocol, signed with SigV4 as the SDK signs it, and of the
// answer only the member the bench reads is decoded.
type leanCaller struct {
	endpoint string
	http     *http.Client
	creds    aws.Credentials
	signer   *v4.Signer
	bufs     sync.Pool // *bytes.Buffer for answers
}

func newLeanCaller(endpoint string, conns int, keyID, secret string) *leanCaller {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = conns, conns
	return &leanCaller{
		endpoint: endpoint + "/",
		http:     &http.Client{Transport: tr},
		creds:    aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret},
		signer:   v4.NewSigner(),
	}
}

// leanError is an error answer of the server.
type leanError struct {
	Type     string `json:"__type"`
	Message  string `json:"message"`
	Message2 string `json:"Message"`
}

// call posts body to operation op and decodes the answer into out.
func (l *leanCaller) call(ctx context.Context, op string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header["Content-Type"] = []string{"application/x-amz-json-1.0"}
	req.Header["X-Amz-Target"] = []string{"AWSStepFunctions." + op}
	sum := sha256.Sum256(body)
	if err := l.signer.SignHTTP(ctx, l.creds, req, hex.EncodeToString(sum[:]), "states", DefaultRegion, time.Now()); err != nil {
		return err
	}
	resp, err := l.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf, _ := l.bufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	defer l.bufs.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, 16<<20)); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e leanError
		_ = json.Unmarshal(buf.Bytes(), &e)
		if e.Message == "" {
			e.Message = e.Message2
		}
		return fmt.Errorf("%s: HTTP %d %s: %s", op, resp.StatusCode, e.Type, e.Message)
	}
	if err := json.Unmarshal(buf.Bytes(), out); err != nil {
		return fmt.Errorf("%s: the answer: %w", op, err)
	}
	return nil
}

func (l *leanCaller) startExecution(ctx context.Context, arn, name, input string) (string, error) {
	body, err := json.Marshal(struct {
		StateMachineArn string `json:"stateMachineArn"`
		Name            string `json:"name"`
		Input           string `json:"input"`
	}{arn, name, input})
	if err != nil {
		return "", err
	}
	var out struct {
		ExecutionArn string `json:"executionArn"`
	}
	err = l.call(ctx, "StartExecution", body, &out)
	return out.ExecutionArn, err
}

func (l *leanCaller) executionStatus(ctx context.Context, executionArn string) (string, error) {
	body, err := json.Marshal(struct {
		ExecutionArn string `json:"executionArn"`
	}{executionArn})
	if err != nil {
		return "", err
	}
	var out struct {
		Status string `json:"status"`
	}
	err = l.call(ctx, "DescribeExecution", body, &out)
	return out.Status, err
}

func (l *leanCaller) startSync(ctx context.Context, arn, input string) (string, error) {
	body, err := json.Marshal(struct {
		StateMachineArn string `json:"stateMachineArn"`
		Input           string `json:"input"`
	}{arn, input})
	if err != nil {
		return "", err
	}
	var out struct {
		Status string `json:"status"`
	}
	err = l.call(ctx, "StartSyncExecution", body, &out)
	return out.Status, err
}
