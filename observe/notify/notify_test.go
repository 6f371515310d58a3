package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/testwait"
	"stepwise/observe/notify"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

var t0 = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

const execArn = "arn:aws:states:us-east-1:123456789012:execution:nightly:run-1"

// change is a status change of the test's execution.
type change struct {
	Status       history.ExecutionStatus
	Input        string
	Output       *string
	Error, Cause *string
	StopDate     *time.Time
}

// notice renders a change as the engine does, at t0 + 1 s.
func notice(t testing.TB, c change) *store.OutboxEvent {
	t.Helper()
	row := &store.Execution{Arn: execArn, StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:nightly", Name: "run-1",
		Status: c.Status, Input: c.Input, Output: c.Output, Error: c.Error, Cause: c.Cause, StartDate: t0, StopDate: c.StopDate}
	at := t0.Add(time.Second)
	return &store.OutboxEvent{CreatedAt: at, Body: notify.Notice(row, at)}
}

func ptr[T any](v T) *T { return &v }

// rendered is the event a notice records.
func rendered(t testing.TB, n *store.OutboxEvent) []byte {
	t.Helper()
	b, err := notify.Render(n.Body)
	require.NoError(t, err)
	return b
}

// id is the event id of a notice.
func id(t *testing.T, n *store.OutboxEvent) string {
	t.Helper()
	ev, err := notify.Parse(rendered(t, n))
	require.NoError(t, err)
	return ev.ID
}

// An event has EventBridge's shape and AWS's detail, with the redrive
// status of the execution at that moment.
func TestRenderShape(t *testing.T) {
	stop := t0.Add(2 * time.Second)
	n := notice(t, change{Status: history.StatusFailed, Input: `{"a":1}`, StopDate: &stop, Error: ptr("Broken"), Cause: ptr("fix me")})
	ev, err := notify.Parse(rendered(t, n))
	require.NoError(t, err)
	require.Len(t, ev.ID, 36, "a UUID")
	require.Less(t, len(n.Body), len(rendered(t, n))/2, "the outbox holds a compact record of the event")
	for _, bad := range []string{``, `{}`, `[1]`, `{"i":"x"}`, string(n.Body[:len(n.Body)-1]), string(n.Body) + "x"} {
		_, err := notify.Render([]byte(bad))
		require.Error(t, err, "%q", bad)
	}
	require.JSONEq(t, `{
		"version": "0", "id": "`+ev.ID+`", "detail-type": "Step Functions Execution Status Change", "source": "aws.states",
		"account": "123456789012", "time": "2026-11-24T09:00:01Z", "region": "us-east-1",
		"resources": ["`+execArn+`"],
		"detail": {
			"executionArn": "`+execArn+`", "stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:nightly",
			"name": "run-1", "status": "FAILED", "startDate": 1795510800000, "stopDate": 1795510802000,
			"input": "{\"a\":1}", "inputDetails": {"included": true}, "output": null, "outputDetails": null,
			"error": "Broken", "cause": "fix me",
			"redriveCount": 0, "redriveDate": null, "redriveStatus": "REDRIVABLE"
		}}`, string(rendered(t, n)))

	running, err := notify.Parse(rendered(t, notice(t, change{Status: history.StatusRunning, Input: `{}`})))
	require.NoError(t, err)
	require.NotEqual(t, ev.ID, running.ID, "each notice has an id of its own")
	require.Equal(t, "NOT_REDRIVABLE", running.Detail.RedriveStatus)
	require.Equal(t, "Execution is RUNNING and cannot be redriven", *running.Detail.RedriveStatusReason)
	require.Nil(t, running.Detail.StopDate)
}

// Past 248 KB of escaped input and output, the input is left out; an
// output past it alone is left out too.
func TestRenderLeavesOutLargePayloads(t *testing.T) {
	big := `"` + strings.Repeat("x", 200*1024) + `"`
	ev, err := notify.Parse(rendered(t, notice(t, change{Status: history.StatusSucceeded, Input: big, Output: ptr(big), StopDate: &t0})))
	require.NoError(t, err)
	require.Nil(t, ev.Detail.Input)
	require.False(t, ev.Detail.InputDetails.Included)
	require.Equal(t, big, *ev.Detail.Output)
	require.True(t, ev.Detail.OutputDetails.Included)

	huge := `"` + strings.Repeat("y", 300*1024) + `"`
	ev, err = notify.Parse(rendered(t, notice(t, change{Status: history.StatusSucceeded, Input: `{}`, Output: ptr(huge), StopDate: &t0})))
	require.NoError(t, err)
	require.Nil(t, ev.Detail.Input)
	require.Nil(t, ev.Detail.Output)
	require.False(t, ev.Detail.OutputDetails.Included)
}

// openStore opens a real store and writes notices to its outbox as the
// engine does, in steps.
func openStore(t *testing.T) store.Driver {
	t.Helper()
	drv, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "stepwise.db"), sqlitestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { drv.Close() })
	return drv
}

func write(t *testing.T, drv store.Driver, notices ...*store.OutboxEvent) {
	t.Helper()
	ctx := context.Background()
	sm := &store.StateMachine{Arn: "arn:aws:states:us-east-1:123456789012:stateMachine:nightly", Name: "nightly", Type: "STANDARD",
		Status: "ACTIVE", RevisionID: "r1", Definition: "{}", RoleArn: "arn:aws:iam::123456789012:role/r", CreatedAt: t0, UpdatedAt: t0}
	_, _ = drv.Executor().StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: sm})
	x := &store.Execution{Arn: execArn + "-" + time.Now().Format("150405.000000000"), StateMachineArn: sm.Arn, RevisionID: "r1", Name: "n",
		Status: history.StatusRunning, Input: "{}", StartDate: t0, RoleArn: sm.RoleArn}
	require.NoError(t, drv.Executor().StepWrite(ctx, []*store.Step{{Insert: x, Outbox: notices}}))
}

// receiver is a webhook endpoint that records what it gets, failing the
// first fail requests.
type receiver struct {
	mu     sync.Mutex
	fail   int
	ids    []string
	bodies [][]byte
	sigs   []string
	stamps []string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail > 0 {
		r.fail--
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	r.ids = append(r.ids, req.Header.Get("X-Stepwise-Event-Id"))
	r.bodies = append(r.bodies, body)
	r.sigs = append(r.sigs, req.Header.Get("X-Stepwise-Signature"))
	r.stamps = append(r.stamps, req.Header.Get("X-Stepwise-Timestamp"))
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

// A webhook that is down gets the events once it is back, in order, signed,
// and the failures are counted; a file gets
// them too, independently.
func TestDeliverToWebhookAndFile(t *testing.T) {
	drv := openStore(t)
	rcv := &receiver{fail: 3}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "events.jsonl")
	secret := []byte("s3cret")
	var failures int
	var mu sync.Mutex
	d := notify.New(drv.Executor(), []notify.Destination{&notify.Webhook{URL: srv.URL, Secret: secret}, &notify.File{Path: file}},
		notify.Options{Poll: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Stats: notify.Stats{Failed: func(string, error) {
			mu.Lock()
			failures++
			mu.Unlock()
		}}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	a := notice(t, change{Status: history.StatusRunning, Input: "{}"})
	b := notice(t, change{Status: history.StatusSucceeded, Input: "{}", Output: ptr("1"), StopDate: &t0})
	ida, idb := id(t, a), id(t, b)
	write(t, drv, a, b)
	d.Nudge()
	testwait.Until(t, func() bool { return len(rcv.got()) == 2 }, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, []string{ida, idb}, rcv.got())
	mu.Lock()
	require.GreaterOrEqual(t, failures, 3, "the failures were counted")
	mu.Unlock()
	rcv.mu.Lock()
	require.Equal(t, "sha256="+notify.Sign(secret, rcv.stamps[0], rcv.bodies[0]), rcv.sigs[0])
	var ev notify.Event
	require.NoError(t, json.Unmarshal(rcv.bodies[1], &ev))
	require.Equal(t, "SUCCEEDED", ev.Detail.Status)
	rcv.mu.Unlock()

	testwait.Until(t, func() bool {
		data, _ := os.ReadFile(file)
		return strings.Count(string(data), "\n") == 2
	}, 30*time.Second, 10*time.Millisecond)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Equal(t, string(rendered(t, a)), lines[0])
	require.Equal(t, string(rendered(t, b)), lines[1])

	// A second deliverer (a restart) starts from the cursors: nothing is
	// delivered twice.
	cancel()
	<-done
	ctx, cancel = context.WithCancel(context.Background())
	done = make(chan struct{})
	d = notify.New(drv.Executor(), []notify.Destination{&notify.Webhook{URL: srv.URL, Secret: secret}}, notify.Options{Poll: 20 * time.Millisecond})
	go func() { d.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	c := notice(t, change{Status: history.StatusRunning, Input: "{}"})
	write(t, drv, c)
	testwait.Until(t, func() bool { return len(rcv.got()) == 3 }, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, []string{ida, idb, id(t, c)}, rcv.got())
}

// Events reach an EventBridge bus (moto's), as AWS's own: a rule on
// source aws.states routes them to a queue.
func TestDeliverToEventBus(t *testing.T) {
	moto := integrationtest.Moto(t)
	ctx := context.Background()
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion("us-east-1"),
		awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("testing", "testing", "")))
	require.NoError(t, err)
	eb := eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(moto) })
	sq := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto) })
	bus := "stepwise-notify-" + time.Now().Format("150405.000000")
	bus = strings.ReplaceAll(bus, ".", "-")
	_, err = eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(bus)})
	require.NoError(t, err)
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(bus)})
	require.NoError(t, err)
	attrs, err := sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{"QueueArn"}})
	require.NoError(t, err)
	_, err = eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("all"), EventBusName: aws.String(bus),
		EventPattern: aws.String(`{"source": ["aws.states"], "detail-type": ["Step Functions Execution Status Change"]}`)})
	require.NoError(t, err)
	_, err = eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("all"), EventBusName: aws.String(bus),
		Targets: []ebtypes.Target{{Id: aws.String("q"), Arn: aws.String(attrs.Attributes["QueueArn"])}}})
	require.NoError(t, err)

	drv := openStore(t)
	d := notify.New(drv.Executor(), []notify.Destination{&notify.Bus{Bus: bus, Client: eb}}, notify.Options{Poll: 20 * time.Millisecond})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { d.Run(runCtx); close(done) }()
	defer func() { cancel(); <-done }()
	write(t, drv, notice(t, change{Status: history.StatusRunning, Input: `{"x":1}`}))

	var body string
	testwait.Until(t, func() bool {
		out, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 1})
		if err != nil || len(out.Messages) == 0 {
			return false
		}
		body = aws.ToString(out.Messages[0].Body)
		return true
	}, 30*time.Second, 50*time.Millisecond)
	var got struct {
		Source     string `json:"source"`
		DetailType string `json:"detail-type"`
		Resources  []string
		Detail     notify.Detail
	}
	require.NoError(t, json.Unmarshal([]byte(body), &got), body)
	require.Equal(t, "aws.states", got.Source)
	require.Equal(t, "Step Functions Execution Status Change", got.DetailType)
	require.Equal(t, []string{execArn}, got.Resources)
	require.Equal(t, "RUNNING", got.Detail.Status)
	require.Equal(t, `{"x":1}`, *got.Detail.Input)
}

// Render never fails on a notice it wrote and never panics on bytes it
// did not; what it renders is JSON.
func FuzzRender(f *testing.F) {
	stop := t0.Add(time.Second)
	for _, c := range []change{
		{Status: history.StatusRunning, Input: `{"a":"\u00e9"}`},
		{Status: history.StatusFailed, Input: `{}`, StopDate: &stop, Error: ptr("E"), Cause: ptr("c")},
		{Status: history.StatusSucceeded, Input: `[]`, Output: ptr(`"x"`), StopDate: &stop},
	} {
		f.Add(notice(f, c).Body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := notify.Render(body)
		if err == nil && !json.Valid(out) {
			t.Fatalf("rendered %q as invalid JSON %q", body, out)
		}
	})
}

// listCounter counts the outbox reads of a deliverer.
type listCounter struct {
	store.Executor
	lists atomic.Int32
}

func (c *listCounter) OutboxList(ctx context.Context, after int64, limit int) ([]*store.OutboxEvent, error) {
	c.lists.Add(1)
	return c.Executor.OutboxList(ctx, after, limit)
}

// Notices the engine offers after committing them are delivered from
// memory, in ID order even when offered out of order; a notice not
// offered is read from the store, and nothing is delivered twice.
// (Each write is a commit of its own, with an ID of its own.)
func TestOfferedNoticesAreDeliveredFromMemory(t *testing.T) {
	drv := openStore(t)
	exec := &listCounter{Executor: drv.Executor()}
	file := filepath.Join(t.TempDir(), "events.jsonl")
	d := notify.New(exec, []notify.Destination{&notify.File{Path: file}}, notify.Options{Poll: time.Hour, Linger: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	testwait.Until(t, func() bool { return exec.lists.Load() == 1 }, 30*time.Second, time.Millisecond, "the first look reads the store")
	lines := func() []string {
		data, _ := os.ReadFile(file)
		if len(data) == 0 {
			return nil
		}
		return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	}

	a, b, c := notice(t, change{Status: history.StatusRunning, Input: "{}"}), notice(t, change{Status: history.StatusRunning, Input: "[]"}),
		notice(t, change{Status: history.StatusSucceeded, Input: "{}", Output: ptr("1"), StopDate: &t0})
	write(t, drv, a) // three commits: IDs n, n+1, n+2
	write(t, drv, b)
	write(t, drv, c)
	d.Offer([]*store.OutboxEvent{c, a, b})
	testwait.Until(t, func() bool { return len(lines()) == 3 }, 30*time.Second, time.Millisecond)
	require.Equal(t, []string{string(rendered(t, a)), string(rendered(t, b)), string(rendered(t, c))}, lines())
	require.EqualValues(t, 1, exec.lists.Load(), "offered notices are not read back")

	// d is committed but not offered: e, offered, waits for d, read from
	// the store; an offer of what was delivered is ignored.
	dn, e := notice(t, change{Status: history.StatusRunning, Input: "{}"}), notice(t, change{Status: history.StatusRunning, Input: "{}"})
	write(t, drv, dn)
	write(t, drv, e)
	d.Offer([]*store.OutboxEvent{a, e})
	testwait.Until(t, func() bool { return len(lines()) == 5 }, 30*time.Second, time.Millisecond)
	require.Equal(t, []string{string(rendered(t, dn)), string(rendered(t, e))}, lines()[3:])
	require.EqualValues(t, 2, exec.lists.Load(), "the gap was read from the store")
	time.Sleep(50 * time.Millisecond)
	require.Len(t, lines(), 5, "nothing twice")

	// One commit's notices share an ID and go together.
	f, g := notice(t, change{Status: history.StatusRunning, Input: "{}"}), notice(t, change{Status: history.StatusRunning, Input: "{}"})
	write(t, drv, f, g)
	require.Equal(t, f.ID, g.ID)
	d.Offer([]*store.OutboxEvent{f, g})
	testwait.Until(t, func() bool { return len(lines()) == 7 }, 30*time.Second, time.Millisecond)
	require.Equal(t, []string{string(rendered(t, f)), string(rendered(t, g))}, lines()[5:])
	require.EqualValues(t, 2, exec.lists.Load())
}

// A deliverer told to stop first delivers what was committed (for a
// while), so a server shut down tells of its last changes.
func TestStopDrains(t *testing.T) {
	drv := openStore(t)
	exec := &listCounter{Executor: drv.Executor()}
	file := filepath.Join(t.TempDir(), "events.jsonl")
	d := notify.New(exec, []notify.Destination{&notify.File{Path: file}}, notify.Options{Poll: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	testwait.Until(t, func() bool { return exec.lists.Load() == 1 }, 30*time.Second, time.Millisecond)
	a := notice(t, change{Status: history.StatusRunning, Input: "{}"})
	write(t, drv, a) // neither offered nor nudged: found only by the drain
	cancel()
	<-done
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, string(rendered(t, a))+"\n", string(data))
}

// Rendering the event of a succeeded execution with a small input and
// output, as delivery does for every notice.
func BenchmarkRender(b *testing.B) {
	in := `{"order": {"id": "o-12345", "customer": "Ada Lovelace", "items": [{"sku": "A1", "qty": 2}, {"sku": "B7", "qty": 1}], "note": "leave at the door"}}`
	n := notice(b, change{Status: history.StatusSucceeded, Input: in, Output: ptr(in), StopDate: &t0})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := notify.Render(n.Body); err != nil {
			b.Fatal(err)
		}
	}
}

// Two servers share a database: only the one that leads delivers, and
// the other takes over from the stored cursor when it comes to lead,
// delivering nothing twice.
func TestOnlyTheLeaderDelivers(t *testing.T) {
	drv := openStore(t)
	file := filepath.Join(t.TempDir(), "events.jsonl")
	var firstLeads atomic.Bool
	firstLeads.Store(true)
	opts := func(leads func(context.Context) bool) notify.Options {
		return notify.Options{Poll: 10 * time.Millisecond, Linger: time.Millisecond, Leads: leads}
	}
	one := notify.New(drv.Executor(), []notify.Destination{&notify.File{Path: file}}, opts(func(context.Context) bool { return firstLeads.Load() }))
	two := notify.New(drv.Executor(), []notify.Destination{&notify.File{Path: file}}, opts(func(context.Context) bool { return !firstLeads.Load() }))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { one.Run(ctx) })
	wg.Go(func() { two.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	lines := func() []string {
		data, _ := os.ReadFile(file)
		if len(data) == 0 {
			return nil
		}
		return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	}

	var want []string
	var lastID int64
	for i := range 6 {
		if i == 3 {
			// The leader delivered the first three and stored its cursor
			// (a leader that goes before it stores its cursor has its last
			// batch delivered again: at least once).
			last := want[2]
			testwait.Until(t, func() bool {
				ls := lines()
				if len(ls) != 3 || ls[2] != last {
					return false
				}
				c, err := drv.Executor().OutboxCursor(context.Background(), (&notify.File{Path: file}).Name())
				return err == nil && c == lastID
			}, 30*time.Second, time.Millisecond)
			firstLeads.Store(false)
		}
		n := notice(t, change{Status: history.StatusRunning, Input: fmt.Sprintf(`{"i": %d}`, i)})
		write(t, drv, n)
		lastID = n.ID
		// Both were offered what they committed: the one that does not
		// lead forgets it.
		one.Offer([]*store.OutboxEvent{n})
		two.Offer([]*store.OutboxEvent{n})
		want = append(want, string(rendered(t, n)))
	}
	testwait.Until(t, func() bool { return len(lines()) == 6 }, 30*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, want, lines(), "each once, in order")
}
