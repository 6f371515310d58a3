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
	// getActivityTask long-polls for a task of an activity and returns
	// its token and input ("" and "" when the poll ended with none).
	getActivityTask(ctx context.Context, activityArn, worker string) (token, input string, err error)
	// sendTaskSuccess completes a task.
	sendTaskSuccess(ctx context.Context, token, output string) error
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

func (s sdkCaller) getActivityTask(ctx context.Context, activityArn, worker string) (string, string, error) {
	out, err := s.c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(activityArn), WorkerName: aws.String(worker)})
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.TaskToken), aws.ToString(out.Input), nil
}

func (s sdkCaller) sendTaskSuccess(ctx context.Context, token, output string) error {
	_, err := s.c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(output)})
	return err
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

// call posts body to operation op and returns the string member named
// member of the answer.
func (l *leanCaller) call(ctx context.Context, op string, body []byte, member string) (string, error) {
	var v string
	err := l.post(ctx, op, body, func(answer []byte) error {
		var ok bool
		if v, ok = memberString(answer, member); !ok {
			return fmt.Errorf("%s: the answer has no string %q: %.200s", op, member, answer)
		}
		return nil
	})
	return v, err
}

// post posts body to operation op and hands the answer's body to read
// (which must not keep it).
func (l *leanCaller) post(ctx context.Context, op string, body []byte, read func(answer []byte) error) error {
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
	return read(buf.Bytes())
}

// memberString finds the string member name of a JSON object as the
// server writes it (no space around the colon), without decoding the
// rest: a quote inside a string is escaped, so `"name":"` is a member's
// start wherever it is (the bench reads only members no nested object of
// its answers has).
func memberString(body []byte, name string) (string, bool) {
	key := make([]byte, 0, len(name)+4)
	key = append(append(append(key, '"'), name...), `":"`...)
	i := bytes.Index(body, key)
	if i < 0 {
		return "", false
	}
	rest := body[i+len(key)-1:] // from the value's opening quote
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 {
		return "", false
	}
	if bytes.IndexByte(rest[1:end+1], '\\') < 0 {
		return string(rest[1 : end+1]), true
	}
	var v string // escapes: the whole string's text, decoded
	dec := json.NewDecoder(bytes.NewReader(rest))
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	return v, true
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
	return l.call(ctx, "StartExecution", body, "executionArn")
}

func (l *leanCaller) executionStatus(ctx context.Context, executionArn string) (string, error) {
	body, err := json.Marshal(struct {
		ExecutionArn string `json:"executionArn"`
	}{executionArn})
	if err != nil {
		return "", err
	}
	return l.call(ctx, "DescribeExecution", body, "status")
}

func (l *leanCaller) startSync(ctx context.Context, arn, input string) (string, error) {
	body, err := json.Marshal(struct {
		StateMachineArn string `json:"stateMachineArn"`
		Input           string `json:"input"`
	}{arn, input})
	if err != nil {
		return "", err
	}
	return l.call(ctx, "StartSyncExecution", body, "status")
}

func (l *leanCaller) getActivityTask(ctx context.Context, activityArn, worker string) (string, string, error) {
	body, err := json.Marshal(struct {
		ActivityArn string `json:"activityArn"`
		WorkerName  string `json:"workerName"`
	}{activityArn, worker})
	if err != nil {
		return "", "", err
	}
	var token, input string
	err = l.post(ctx, "GetActivityTask", body, func(answer []byte) error {
		token, _ = memberString(answer, "taskToken")
		input, _ = memberString(answer, "input")
		return nil
	})
	return token, input, err
}

func (l *leanCaller) sendTaskSuccess(ctx context.Context, token, output string) error {
	body, err := json.Marshal(struct {
		TaskToken string `json:"taskToken"`
		Output    string `json:"output"`
	}{token, output})
	if err != nil {
		return err
	}
	return l.post(ctx, "SendTaskSuccess", body, func([]byte) error { return nil })
}
