package http

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"time"

	"stepwise/integration"
	"stepwise/internal/security/egress"
)

// Resource is the resource ARN of the HTTP Task.
const Resource = integration.ResourcePrefix + "http:invoke"

// socketTimeout is how long an API has to answer, as on AWS.
const socketTimeout = 60 * time.Second

// defaultPayloadLimit is the largest response body read when the
// configuration sets no payload limit: 256 KiB, Step Functions' quota.
const defaultPayloadLimit = 256 * 1024

func init() {
	integration.Register(integration.Module{Resource: Resource, New: newInvoker})
}

// invoker carries out HTTP Tasks.
type invoker struct {
	client  *http.Client
	guard   *egress.Guard
	conns   connections
	region  string
	limit   int
	timeout time.Duration
}

var _ integration.Integration = (*invoker)(nil)

// newInvoker loads the connections file and reads the allow list; a bad
// file or entry stops the registry from being built.
func newInvoker(cfg *integration.Config) (integration.Integration, error) {
	conns, err := loadConnections(cfg.ConnectionsFile)
	if err != nil {
		return nil, err
	}
	allow, err := egress.ParseAllow(cfg.HTTPTaskAllow...)
	if err != nil {
		return nil, fmt.Errorf("http task allow list: %w", err)
	}
	inv := &invoker{
		guard:   &egress.Guard{Allow: allow},
		conns:   conns,
		region:  cfg.Region,
		limit:   cmp.Or(cfg.PayloadLimit, defaultPayloadLimit),
		timeout: socketTimeout,
	}
	inv.client = &http.Client{Transport: inv.guard.Transport(), CheckRedirect: inv.checkRedirect}
	return inv, nil
}

// Call makes the task's request and answers with the response, or fails
// the task with States.Http.StatusCode.<NNN> or States.Http.Socket.
func (inv *invoker) Call(ctx context.Context, r *integration.Request) (any, error) {
	p, err := parseParams(r.Parameters)
	if err != nil {
		return nil, err
	}
	if err := inv.guard.CheckURL(p.endpoint); err != nil {
		return nil, refusal(err)
	}
	conn, err := inv.conns.resolve(p.connectionArn)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, inv.timeout, errSocketTimeout)
	defer cancel()
	req, err := inv.newRequest(ctx, p, conn)
	if err != nil && ctx.Err() != nil {
		return nil, inv.transportFailure(ctx, err) // while fetching a token
	}
	if err != nil {
		return nil, err
	}
	// A traced task's span is the parent of the endpoint's work (W3C
	// Trace Context), unless the task sends a traceparent of its own.
	if r.TraceParent != "" && req.Header.Get("Traceparent") == "" {
		req.Header.Set("Traceparent", r.TraceParent)
	}
	resp, err := inv.client.Do(req)
	if err != nil {
		return nil, inv.transportFailure(ctx, err)
	}
	defer resp.Body.Close()
	body, err := inv.readBody(ctx, resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized && conn != nil && conn.AuthorizationType == authOAuth {
		conn.token.clear() // the next call fetches a new token
	}
	out := result(resp, body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, statusFailure(resp.StatusCode, out)
	}
	return out, nil
}
