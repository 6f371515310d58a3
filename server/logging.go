package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"stepwise/config"
	"stepwise/engine"
	"stepwise/history"
	"stepwise/integration"
	"stepwise/integration/awssdk"
	"stepwise/jsonvalue"
	"stepwise/observe/execlog"
	"stepwise/observe/metrics"
	"stepwise/service"
	"stepwise/store"
)

// Execution logs can go to CloudWatch Logs at a configured endpoint:
// --endpoint logs=URL names a service no Task integration calls.
func init() { integration.RegisterServices("logs") }

// requestLog logs each request at debug level: method, path, operation
// (from X-Amz-Target), status, duration and the request ID the API
// answered with. When the logger leaves debug out it returns next itself,
// so that requests cost nothing more.
func requestLog(log *slog.Logger, next http.Handler) http.Handler {
	if !log.Enabled(context.Background(), slog.LevelDebug) {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		op := r.Header.Get("X-Amz-Target")
		if i := strings.LastIndexByte(op, '.'); i >= 0 {
			op = op[i+1:]
		}
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		log.LogAttrs(r.Context(), slog.LevelDebug, "server: request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("operation", op),
			slog.Int("status", status), slog.Duration("duration", time.Since(start)),
			slog.String("request_id", w.Header().Get("x-amzn-RequestId")))
	})
}

// statusRecorder keeps the status a handler answers with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// executionEnds logs one line at debug level for each execution that
// ends. At info there is none: like AWS, the server says nothing of an
// execution unless asked (a busy server would write a line for each).
// The engine tells of steps with the execution's lock held, so lines are
// queued and written by a goroutine of their own; past endsQueue waiting,
// they are dropped.
type executionEnds struct {
	log  *slog.Logger
	ch   chan *endLine
	stop chan struct{}
	done chan struct{}
}

const endsQueue = 4096

type endLine struct {
	arn, stateMachineArn string
	status               history.ExecutionStatus
	error                *string
}

func newExecutionEnds(log *slog.Logger) *executionEnds {
	e := &executionEnds{log: log, ch: make(chan *endLine, endsQueue), stop: make(chan struct{}), done: make(chan struct{})}
	go e.run()
	return e
}

func (e *executionEnds) StepCommitted(s *engine.CommittedStep) {
	x := s.Execution
	if x.Status == history.StatusRunning || x.Status == s.Previous {
		return
	}
	select {
	case e.ch <- &endLine{arn: x.Arn, stateMachineArn: x.StateMachineArn, status: x.Status, error: x.Error}:
	default:
	}
}

func (e *executionEnds) BatchCommitted([]*store.Step, time.Duration, error) {}
func (e *executionEnds) Resumed(string, time.Duration)                      {}

func (e *executionEnds) run() {
	defer close(e.done)
	for {
		select {
		case l := <-e.ch:
			e.write(l)
		case <-e.stop:
			for {
				select {
				case l := <-e.ch:
					e.write(l)
				default:
					return
				}
			}
		}
	}
}

func (e *executionEnds) write(l *endLine) {
	attrs := []slog.Attr{
		slog.String("execution_arn", l.arn), slog.String("state_machine_arn", l.stateMachineArn), slog.String("status", string(l.status)),
	}
	if l.error != nil {
		attrs = append(attrs, slog.String("error", *l.error))
	}
	e.log.LogAttrs(context.Background(), slog.LevelDebug, "server: execution ended", attrs...)
}

// close writes the lines queued and ends the goroutine.
func (e *executionEnds) close() {
	close(e.stop)
	<-e.done
}

// serverLogs are the logs a server writes as executions run: executions'
// own (their state machines' logging configurations) and a line for each
// execution that ends.
type serverLogs struct {
	writer *execlog.Writer // nil: --execution-logs off
	ends   *executionEnds  // nil: debug left out
}

// startLogs starts the server's execution logs as cfg says.
func startLogs(ctx context.Context, cfg *config.Serve, db store.Driver, met *metrics.Metrics, log *slog.Logger) (*serverLogs, error) {
	l := &serverLogs{}
	if log.Enabled(ctx, slog.LevelDebug) {
		l.ends = newExecutionEnds(log)
	}
	var sink execlog.Sink
	switch {
	case cfg.ExecutionLogs.To == config.ExecutionLogsOff:
		return l, nil
	case cfg.UsesCloudWatchLogs():
		ic := integration.Config{Region: cfg.Region, Endpoint: cfg.Integrations.AWSEndpoint, Endpoints: cfg.Integrations.Endpoints}
		awsCfg, endpoint, err := ic.AWSConfig(ctx, "logs")
		if err != nil {
			return nil, fmt.Errorf("execution logs: %w", err)
		}
		if endpoint == "" {
			if _, err := awsCfg.Credentials.Retrieve(ctx); err != nil {
				return nil, fmt.Errorf("execution-logs cloudwatch: no AWS credentials for CloudWatch Logs: %w", err)
			}
		}
		sink = &execlog.CloudWatchSink{API: cloudWatchLogs{awssdk.Shared(&ic)}}
		where := endpoint
		if where == "" {
			where = "AWS"
		}
		log.Info("execlog: executions' logs go to CloudWatch Logs", "endpoint", where)
	default:
		sink = &execlog.FileSink{Dir: cfg.ExecutionLogsDir(), Logger: log}
	}
	lc := execlog.Config{StateMachines: db.Executor(), Sink: sink, Logger: log}
	if met != nil {
		lc.OnWritten, lc.OnDropped = met.ExecutionLogsWritten, met.ExecutionLogsDropped
	}
	w, err := execlog.New(lc)
	if err != nil {
		l.close()
		return nil, err
	}
	l.writer = w
	return l, nil
}

// observers are what the engine tells of its steps.
func (l *serverLogs) observers() []engine.Observer {
	var out []engine.Observer
	if l.writer != nil {
		out = append(out, l.writer)
	}
	if l.ends != nil {
		out = append(out, l.ends)
	}
	return out
}

// service hands the writer each revision's logging configuration.
func (l *serverLogs) service(c *service.Config) {
	if l.writer != nil {
		c.OnStateMachine = l.writer.Prime
	}
}

// close writes what is queued: call it once the engine has stopped.
func (l *serverLogs) close() {
	if l.writer != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		l.writer.Close(ctx)
		cancel()
	}
	if l.ends != nil {
		l.ends.close()
	}
}

// cloudWatchLogs is execlog.CloudWatchAPI called from CloudWatch Logs' API
// model (botocore's "logs") at the endpoint configured for "logs".
type cloudWatchLogs struct{ client *awssdk.Client }

func (c cloudWatchLogs) CreateLogStream(ctx context.Context, region, group, stream string) error {
	in := jsonvalue.NewObject(2)
	in.Set("LogGroupName", group)
	in.Set("LogStreamName", stream)
	_, err := c.client.Invoke(ctx, "logs", "CreateLogStream", in, awssdk.InvokeOptions{Region: region})
	return cloudWatchError(err)
}

func (c cloudWatchLogs) PutLogEvents(ctx context.Context, region, group, stream string, events []execlog.LogEvent) (*execlog.Rejected, error) {
	list := make([]any, len(events))
	for i, e := range events {
		ev := jsonvalue.NewObject(2)
		ev.Set("Timestamp", jsonvalue.NumberFromInt(e.Timestamp))
		ev.Set("Message", e.Message)
		list[i] = ev
	}
	in := jsonvalue.NewObject(3)
	in.Set("LogGroupName", group)
	in.Set("LogStreamName", stream)
	in.Set("LogEvents", list)
	reply, err := c.client.Invoke(ctx, "logs", "PutLogEvents", in, awssdk.InvokeOptions{Region: region})
	if err != nil {
		return nil, cloudWatchError(err)
	}
	info, _ := reply.Result.Get("RejectedLogEventsInfo")
	obj, _ := info.(*jsonvalue.Object)
	if obj == nil {
		return nil, nil
	}
	index := func(name string) *int32 {
		v, _ := obj.Get(name)
		n, ok := v.(jsonvalue.Number)
		if !ok {
			return nil
		}
		i, ok := n.Int64()
		if !ok {
			return nil
		}
		x := int32(i)
		return &x
	}
	return &execlog.Rejected{
		TooOldEnd:   index("TooOldLogEventEndIndex"),
		ExpiredEnd:  index("ExpiredLogEventEndIndex"),
		TooNewStart: index("TooNewLogEventStartIndex"),
	}, nil
}

// cloudWatchError marks the service's answers the sink acts on.
func cloudWatchError(err error) error {
	var svcErr *awssdk.ServiceError
	if errors.As(err, &svcErr) {
		switch svcErr.Code {
		case "ResourceAlreadyExistsException":
			return fmt.Errorf("%w: %w", execlog.ErrStreamExists, err)
		case "ResourceNotFoundException":
			return fmt.Errorf("%w: %w", execlog.ErrNotFound, err)
		}
	}
	return err
}
