package awssdk

import (
	"context"
	"fmt"
	"io"
	"strings"

	"stepwise/integration"
	"stepwise/integration/awssdk/awsmodel"
)

var _ integration.PayloadOpener = (*Client)(nil)

// OpenPayload makes a call whose answer's payload is a blob or a string
// (S3 GetObject's Body) and hands that payload over unread, as it
// arrives, for the caller to read and close: an object of any size is
// never held. It is addressed, signed and retried as Call is, and fails
// as Call fails: an error answer (S3's NoSuchKey) with the same failure,
// and an answer cut short, when it is read, with the SdkClientException
// Call fails with when it cannot read the answer.
func (c *Client) OpenPayload(ctx context.Context, r *integration.Request) (io.ReadCloser, error) {
	m, _, resp, err := c.exchange(ctx, r, true, func(op *awsmodel.Operation) error {
		if !hasRawPayload(op) {
			return fmt.Errorf("the answer of %s:%s has no payload to read", strings.TrimPrefix(r.Service, "aws-sdk:"), r.Action)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &payload{body: resp.stream, ctx: ctx, m: m}, nil
}

// hasRawPayload reports whether an operation answers with a blob or string
// payload, which Call makes its result's member as text.
func hasRawPayload(op *awsmodel.Operation) bool {
	if op.Output == nil || op.Output.Shape == nil || op.Output.Shape.Payload == "" {
		return false
	}
	mem, ok := op.Output.Shape.Members.Named(op.Output.Shape.Payload)
	return ok && mem.Ref != nil && mem.Shape != nil && mem.Shape.Type != "structure" && !mem.Shape.Document
}

// payload is the body of an answer as it arrives. An error reading it is
// the failure Call fails with when it cannot read an answer, or the
// context's error once the call is cancelled.
type payload struct {
	body io.ReadCloser
	ctx  context.Context
	m    *awsmodel.Model
	err  error
}

func (p *payload) Read(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.body.Read(b)
	if err != nil && err != io.EOF {
		if p.ctx.Err() != nil {
			err = p.ctx.Err()
		} else {
			err = clientFailure(p.m, "Unable to execute HTTP request: %v", err)
		}
		p.err = err
	}
	return n, err
}

func (p *payload) Close() error { return p.body.Close() }
