package awssdk

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"stepwise/asl"
	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/awssdk/awsmodel"
)

// Resource is the resource ARN prefix served: every AWS SDK integration
// (aws-sdk:sfn keeps its own, longer prefix).
const Resource = integration.ResourcePrefix + "aws-sdk:"

// EnvModels names the environment variable that points at a directory of
// extra service models (<service>.json or <service>.json.gz in botocore's
// format), read before the embedded ones.
const EnvModels = "STEPWISE_AWS_MODELS"

// maxAttempts is how many times a call is tried when the service is
// throttling or failing (5xx), as the AWS SDK for Java's default.
const maxAttempts = 3

func init() {
	integration.RegisterServices(awsmodel.ServiceNames(os.Getenv(EnvModels))...)
	integration.Register(integration.Module{
		Resource: Resource + "*",
		Patterns: []integration.Pattern{integration.WaitForTaskToken},
		New: func(cfg *integration.Config) (integration.Integration, error) {
			return New(cfg, &awsmodel.Models{Dir: os.Getenv(EnvModels)}), nil
		},
		Serves: servesService,
	})
}

// Client calls AWS services as their models describe them.
type Client struct {
	cfg    *integration.Config
	models *awsmodel.Models
	signer *v4.Signer
	s3     *v4.Signer // S3 signs the path as sent

	mu      sync.Mutex
	targets map[string]*target
}

var _ integration.Integration = (*Client)(nil)

// target is where calls to a service go and with which credentials.
type target struct {
	aws      aws.Config
	endpoint string // "" for AWS's own
}

// exchange makes one API call and returns its answer when it succeeded
// (the body unread when stream is set), or the failure it answered:
// addressed, signed and retried alike for Call and OpenPayload. check,
// when set, vets the operation before anything is sent.
func (c *Client) exchange(ctx context.Context, r *integration.Request, stream bool, check func(*awsmodel.Operation) error) (*awsmodel.Model, *awsmodel.Operation, *response, error) {
	m, op, resp, apiErr, err := c.exchangeRaw(ctx, r, "", stream, check)
	if apiErr != nil {
		return nil, nil, nil, apiErr.failure(m)
	}
	return m, op, resp, err
}

// exchangeRaw is exchange with a service's error answer as it came, in
// region ("": the configured one).
func (c *Client) exchangeRaw(ctx context.Context, r *integration.Request, region string, stream bool, check func(*awsmodel.Operation) error) (*awsmodel.Model, *awsmodel.Operation, *response, *apiError, error) {
	service := strings.TrimPrefix(r.Service, "aws-sdk:")
	m, op, err := c.operation(service, r.Action)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if check != nil {
		if err := check(op); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	in, err := convertParams(r.Parameters, op.Input)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if f := missingRequired(m, op, r.Parameters); f != nil {
		return nil, nil, nil, nil, f
	}
	req, err := marshal(m, op, in)
	if err != nil {
		return nil, nil, nil, nil, integration.AsFailure(err)
	}
	resp, err := c.send(ctx, service, region, m, req, stream)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if resp.status >= 300 {
		e := parseError(m, op, resp)
		return m, op, nil, &e, nil
	}
	return m, op, resp, nil, nil
}

// New returns a client for the configured endpoints and credentials.
func New(cfg *integration.Config, models *awsmodel.Models) *Client {
	return &Client{
		cfg:     cfg,
		models:  models,
		signer:  v4.NewSigner(),
		s3:      v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }),
		targets: map[string]*target{},
	}
}

// Call makes one API call: arn:aws:states:::aws-sdk:<service>:<action>
// with the Parameters as its input.
func (c *Client) Call(ctx context.Context, r *integration.Request) (any, error) {
	m, op, resp, err := c.exchange(ctx, r, false, nil)
	if err != nil {
		return nil, err
	}
	out, err := unmarshal(m, op, resp)
	if err != nil {
		return nil, clientFailure(m, "Unable to unmarshall response (%v). Response Code: %d", err, resp.status)
	}
	return out, nil
}

// operation finds the model and operation of a resource.
func (c *Client) operation(service, action string) (*awsmodel.Model, *awsmodel.Operation, error) {
	m, err := c.models.Get(service)
	if errors.Is(err, awsmodel.ErrUnknownService) {
		return nil, nil, notRecognized(service, action)
	}
	if err != nil {
		return nil, nil, err
	}
	op, ok := m.Operation(action)
	if !ok {
		return nil, nil, notRecognized(service, action)
	}
	return m, op, nil
}

// notRecognized is the failure of a resource no model describes, worded
// as AWS refuses such a resource.
func notRecognized(service, action string) *failure.Failure {
	return failure.Newf(failure.TaskFailed,
		"The resource provided %saws-sdk:%s:%s is not recognized. The value is not a valid resource ARN, or the resource is not available in this region.",
		integration.ResourcePrefix, service, action)
}

// target returns the configuration of calls to a service.
func (c *Client) target(ctx context.Context, service, region string) (*target, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := service + "@" + region
	if t, ok := c.targets[key]; ok {
		return t, nil
	}
	cfg, endpoint, err := c.cfg.AWSConfig(ctx, service)
	if err != nil {
		return nil, err
	}
	if region != "" {
		cfg.Region = region
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = awshttp.NewBuildableClient()
	}
	t := &target{aws: cfg, endpoint: endpoint}
	c.targets[key] = t
	return t, nil
}

// send signs and sends a request, trying again while the service is
// throttling or failing. An error is a task failure: the call never got
// an answer. With stream set, a successful answer's body is left unread,
// in the response's stream, for the caller to read and close.
func (c *Client) send(ctx context.Context, service, region string, m *awsmodel.Model, req *request, stream bool) (*response, error) {
	t, err := c.target(ctx, service, region)
	if err != nil {
		return nil, clientFailure(m, "%v", err)
	}
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, t, m, req, stream)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, clientFailure(m, "Unable to execute HTTP request: %v", err)
		}
		if resp.stream != nil || attempt == maxAttempts || !retryable(resp) {
			return resp, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt*attempt) * 100 * time.Millisecond):
		}
	}
}

// retryable reports whether an answer is worth trying again.
func retryable(resp *response) bool {
	if resp.status >= 500 || resp.status == http.StatusTooManyRequests {
		return true
	}
	return resp.status == http.StatusBadRequest && bytes.Contains(resp.body, []byte("Throttling"))
}

// attempt sends a request once. With stream set, the body of a
// successful (2xx) answer is not read: it is the response's stream.
func (c *Client) attempt(ctx context.Context, t *target, m *awsmodel.Model, req *request, stream bool) (*response, error) {
	hreq, region, err := c.httpRequest(ctx, t, m, req)
	if err != nil {
		return nil, err
	}
	if t.aws.Credentials == nil {
		return nil, errors.New("unable to load credentials: none configured")
	}
	creds, err := t.aws.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("unable to load credentials: %w", err)
	}
	sum := sha256.Sum256(req.body)
	hash := hex.EncodeToString(sum[:])
	signer := c.signer
	if m.SigningName() == "s3" {
		signer = c.s3
		hreq.Header.Set("X-Amz-Content-Sha256", hash)
	}
	if err := signer.SignHTTP(ctx, creds, hreq, hash, m.SigningName(), region, time.Now().UTC()); err != nil {
		return nil, err
	}
	res, err := t.aws.HTTPClient.Do(hreq)
	if err != nil {
		return nil, err
	}
	if stream && res.StatusCode < 300 {
		return &response{status: res.StatusCode, header: res.Header, stream: res.Body}, nil
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	return &response{status: res.StatusCode, header: res.Header, body: body}, nil
}

// httpRequest addresses a request and returns it with the region it is
// signed for: the configured endpoint (S3 path-style, no host prefix),
// or AWS's own, https://<prefix>.<region>.amazonaws.com.
func (c *Client) httpRequest(ctx context.Context, t *target, m *awsmodel.Model, req *request) (*http.Request, string, error) {
	region := t.aws.Region
	base := t.endpoint
	if base == "" {
		var host string
		host, region = awsHost(m, region)
		base = "https://" + req.hostPrefix + host
	}
	u, err := url.Parse(strings.TrimSuffix(base, "/") + req.path)
	if err != nil {
		return nil, "", err
	}
	u.RawQuery = strings.ReplaceAll(req.query.Encode(), "+", "%20")
	hreq, err := http.NewRequestWithContext(ctx, req.method, u.String(), bytes.NewReader(req.body))
	if err != nil {
		return nil, "", err
	}
	hreq.URL = u
	for k, vs := range req.header {
		hreq.Header[k] = vs
	}
	return hreq, region, nil
}

// awsHost is a service's host in a region, and the region calls to it
// are signed for (us-east-1 for global services such as IAM).
func awsHost(m *awsmodel.Model, region string) (string, string) {
	if g := m.Metadata.GlobalEndpoint; g != "" && m.SigningName() != "s3" {
		return g, "us-east-1"
	}
	suffix := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	return m.Metadata.EndpointPrefix + "." + region + "." + suffix, region
}

// knownModels are the models KnowsResource reads.
var knownModels = sync.OnceValue(func() *awsmodel.Models { return &awsmodel.Models{Dir: os.Getenv(EnvModels)} })

// Diagnostics refuses the Task states of m whose resource names an AWS
// SDK action that does not exist, as AWS does at create time.
func Diagnostics(m *asl.StateMachine) []asl.Diagnostic {
	var diags []asl.Diagnostic
	for _, t := range m.Tasks() {
		if !KnowsResource(t.Resource) {
			diags = append(diags, asl.ErrResourceNotRecognized(t.Location, t.Resource))
		}
	}
	return diags
}

// servesService says whether there is a model of the service an AWS SDK
// resource calls (without one the call fails at run time), and if not
// how to add one.
func servesService(resource string) (bool, string) {
	svc, _, isSDK := sdkAction(resource)
	if !isSDK {
		return true, ""
	}
	if _, err := knownModels().Get(svc); errors.Is(err, awsmodel.ErrUnknownService) {
		return false, fmt.Sprintf("no model of the AWS service %s is built in; put botocore's %s service-2.json in a folder and name it with %s", svc, svc, EnvModels)
	}
	return true, ""
}

// sdkAction is the service and action an AWS SDK resource names
// ("arn:aws:states:::aws-sdk:s3:getObject": s3, getObject); isSDK is false
// for any other resource.
func sdkAction(resource string) (service, action string, isSDK bool) {
	name, action, _, ok := integration.ParseResource(resource)
	service, isSDK = strings.CutPrefix(name, "aws-sdk:")
	return service, action, ok && isSDK
}

// KnowsResource reports whether a Task resource names something that may
// exist: false only for an AWS SDK integration whose service's model has
// no such action (AWS refuses it at create time).
func KnowsResource(resource string) bool {
	svc, action, isSDK := sdkAction(resource)
	return !isSDK || knownModels().KnowsAction(svc, action)
}
