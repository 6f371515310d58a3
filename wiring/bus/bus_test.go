package bus

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/require"

	"stepwise/wiring"
)

// calls records the StartExecution calls of a bus's Env.
type calls struct {
	mu     sync.Mutex
	inputs []string
	fail   int // fail this many calls first
	tries  int
}

func (c *calls) env() *wiring.Env {
	return &wiring.Env{Account: "123456789012", Region: "us-east-1",
		Call: func(_ context.Context, op string, in []byte) ([]byte, error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.tries++
			if c.fail > 0 {
				c.fail--
				return nil, errors.New("ServiceUnavailable")
			}
			var req struct{ Input string }
			if err := json.Unmarshal(in, &req); err != nil {
				return nil, err
			}
			c.inputs = append(c.inputs, req.Input)
			return []byte(`{}`), nil
		}}
}

func ruleWire(t *testing.T, id string, r Rule) wiring.Wire {
	src, err := json.Marshal(r)
	require.NoError(t, err)
	return wiring.Wire{Stack: "s", ID: id, Kind: Kind, Source: src,
		Target: wiring.Target{Type: wiring.ToStateMachine, ARN: "arn:aws:states:us-east-1:123456789012:stateMachine:m"}}
}

func put(t *testing.T, b *Bus, body string) *PutEventsOutput {
	out, err := b.PutEvents(context.Background(), []byte(body))
	require.NoError(t, err)
	b.Wait()
	return out
}

func TestBusDeliversTransformedInputToMatchingEnabledRules(t *testing.T) {
	t.Parallel()
	c := &calls{}
	b := New(c.env())
	defer b.Close()
	_, err := b.Add(context.Background(), ruleWire(t, "On/Sm", Rule{Name: "on", ARN: "arn:aws:events:us-east-1:123456789012:rule/on",
		Pattern: `{"source": ["shop"], "detail": {"total": [{"numeric": [">", 100]}]}}`,
		InputTransformer: &InputTransformer{InputPathsMap: map[string]string{"order": "$.detail.id", "total": "$.detail.total"},
			InputTemplate: `{"order": <order>, "text": "order <order> by <aws.events.rule-name>", "total": <total>}`}}))
	require.NoError(t, err)
	_, err = b.Add(context.Background(), ruleWire(t, "Off/Sm", Rule{Name: "off", State: "DISABLED", Pattern: `{"source": ["shop"]}`}))
	require.NoError(t, err)

	out := put(t, b, `{"Entries": [{"Source": "shop", "DetailType": "Order", "Detail": "{\"id\": \"o-1\", \"total\": 150}"},
		{"Source": "shop", "DetailType": "Order", "Detail": "{\"id\": \"o-2\", \"total\": 5}"},
		{"Source": "shop", "DetailType": "Order", "Detail": "[1]"}, {"DetailType": "Order", "Detail": "{}"}]}`)
	require.Equal(t, 2, out.FailedEntryCount)
	require.NotEmpty(t, out.Entries[0].EventID)
	require.Equal(t, "MalformedDetail", out.Entries[2].ErrorCode)
	require.Equal(t, "InvalidArgument", out.Entries[3].ErrorCode)
	require.Equal(t, []string{`{"order": "o-1", "text": "order o-1 by on", "total": 150}`}, c.inputs)
}

func TestBusEnvelopeAndRetries(t *testing.T) {
	t.Parallel()
	c := &calls{fail: 2}
	b := New(c.env())
	b.Backoff = func(int) time.Duration { return time.Millisecond }
	defer b.Close()
	_, err := b.Add(context.Background(), ruleWire(t, "R/Sm", Rule{Name: "r", Bus: "orders", Pattern: `{"detail-type": ["Order"]}`}))
	require.NoError(t, err)
	put(t, b, `{"Entries": [{"Source": "shop", "DetailType": "Order", "Detail": "{}"}]}`)
	require.Empty(t, c.inputs, "an event on the default bus does not reach a rule of another bus")
	out := put(t, b, `{"Entries": [{"Source": "shop", "DetailType": "Order", "Detail": "{\"a\":1}", "EventBusName": "arn:aws:events:us-east-1:123456789012:event-bus/orders", "Resources": ["r1"]}]}`)
	require.Equal(t, 3, c.tries)
	require.Len(t, c.inputs, 1)
	var ev map[string]any
	require.NoError(t, json.Unmarshal([]byte(c.inputs[0]), &ev))
	require.Equal(t, "0", ev["version"])
	require.Equal(t, out.Entries[0].EventID, ev["id"])
	require.Equal(t, "Order", ev["detail-type"])
	require.Equal(t, "shop", ev["source"])
	require.Equal(t, "123456789012", ev["account"])
	require.Equal(t, "us-east-1", ev["region"])
	require.Equal(t, []any{"r1"}, ev["resources"])
	require.Equal(t, map[string]any{"a": 1.0}, ev["detail"])
	require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`, ev["time"])
}

func TestBusRefusesBadRequestsAndRules(t *testing.T) {
	t.Parallel()
	b := New((&calls{}).env())
	defer b.Close()
	_, err := b.PutEvents(context.Background(), []byte(`{"Entries": []}`))
	require.ErrorContains(t, err, "at 'entries' failed to satisfy constraint")
	many := `{"Entries": [` + `{"Source":"a","DetailType":"b","Detail":"{}"}`
	for range 10 {
		many += `,{"Source":"a","DetailType":"b","Detail":"{}"}`
	}
	_, err = b.PutEvents(context.Background(), []byte(many+`]}`))
	require.ErrorContains(t, err, "less than or equal to 10")
	_, err = b.Add(context.Background(), ruleWire(t, "Bad", Rule{Name: "bad", Pattern: `{"source": "x"}`}))
	require.ErrorContains(t, err, "Event pattern is not valid")
	_, err = b.Add(context.Background(), ruleWire(t, "Bad", Rule{Name: "bad", Pattern: `{"source": ["x"]}`, Input: "{}", InputPath: "$.detail"}))
	require.ErrorContains(t, err, "only one of Input, InputPath and InputTransformer")
}

// The events a bus takes go on to the AWS endpoint's EventBridge, with
// its ids, unless they were forwarded to it already (marked) or the
// endpoint is the server itself: events do not go round.
func TestBusForwardsOnceAndNotToItself(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var forwarded []string
	aws := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		forwarded = append(forwarded, r.Header.Get(ForwardedHeader))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		io.WriteString(w, `{"Entries": [{"EventId": "aws-id"}], "FailedEntryCount": 0}`)
	}))
	defer aws.Close()
	c := &calls{}
	env := c.env()
	env.AWS = func(context.Context, string) (awssdk.Config, error) {
		return awssdk.Config{Region: "us-east-1", BaseEndpoint: awssdk.String(aws.URL),
			Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")}, nil
	}
	b := New(env)
	body := `{"Entries": [{"Source": "s", "DetailType": "d", "Detail": "{}"}]}`
	request := func(mark bool) ResultEntry {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "AWSEvents.PutEvents")
		if mark {
			req.Header.Set(ForwardedHeader, "events")
		}
		rec := httptest.NewRecorder()
		b.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var out PutEventsOutput
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		return out.Entries[0]
	}

	require.Equal(t, "aws-id", request(false).EventID, "sent on, with the endpoint's id")
	require.Equal(t, []string{"events"}, forwarded, "marked as forwarded")

	got := request(true)
	require.NotEqual(t, "aws-id", got.EventID)
	require.NotEmpty(t, got.EventID)
	require.Len(t, forwarded, 1, "a forwarded request is not sent on again")

	b.SetSelf(func(endpoint string) bool { return endpoint == aws.URL })
	require.NotEqual(t, "aws-id", request(false).EventID)
	require.Len(t, forwarded, 1, "not sent to the server itself")
}
