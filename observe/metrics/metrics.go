// Package metrics exposes Stepwise's Prometheus metrics: AWS's Step
// Functions CloudWatch metrics under Prometheus names (executions,
// activities, Lambda functions, service integrations, the API's
// throttling), and the engine's own (executions in memory, timers,
// commits, replays, storage errors, event delivery).
//
// The execution, activity, Lambda and service-integration counts are
// taken from the history events of committed steps, as the engine's
// Observer (engine.Config.Observer): each event is committed once, so
// each is counted once in a process, and the counts equal what the
// histories say (counters start at zero in each process).
package metrics

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"stepwise/engine"
	"stepwise/history"
	"stepwise/store"
)

// Metrics holds the collectors and is the engine's Observer.
type Metrics struct {
	reg *prometheus.Registry

	execStarted, execSucceeded, execFailed, execAborted, execTimedOut, execRedriven, execThrottled *prometheus.CounterVec
	// transitions and cost count the billable state transitions of
	// STANDARD executions and what they would cost on AWS at prices.
	transitions, cost *prometheus.CounterVec
	// warnings counts the Tasks that ended with warning, by state
	// machine and state (engine.StepWarnings).
	warnings *prometheus.CounterVec
	prices   history.Prices
	execTime *prometheus.HistogramVec

	activities, lambdas, integrations kindMetrics

	apiRequests, apiThrottled, apiConsumed *prometheus.CounterVec
	apiCalls                               sync.Map // apiKey → its child of apiRequests

	batchSize, commitLatency, replayTime prometheus.Histogram
	storageErrors                        prometheus.Counter

	eventsDelivered, eventsFailed *prometheus.CounterVec
	eventsLag                     *prometheus.GaugeVec
	lateJobs                      *prometheus.GaugeVec

	logsWritten, logsDropped prometheus.Counter

	retentionDeleted prometheus.Counter
	retentionBatch   prometheus.Histogram

	// mu guards pending and the children caches below.
	mu      sync.Mutex
	pending map[string]map[int64]*pendingTask // execution ARN → scheduled/started event id → its task
	// machines and tasks keep the collectors' children of each label
	// value seen: a step counts without hashing label values
	// (WithLabelValues). They hold as many entries as the collectors'
	// own children, which are never deleted either.
	machines map[string]*machineMetrics
	tasks    map[taskKey]*taskMetrics
}

// machineMetrics are the children of one state machine's collectors.
type machineMetrics struct {
	transitions, cost, started, succeeded, failed, aborted, timedOut, redriven prometheus.Counter
	execTime                                                                   prometheus.Observer
}

// taskKey names the children of one kind of task's label value.
type taskKey struct {
	kind  *kindMetrics
	label string
}

// taskMetrics are the children of one activity's, Lambda function's or
// service integration's collectors.
type taskMetrics struct {
	scheduled, started, succeeded, failed, timedOut, heartbeatTimedOut prometheus.Counter
	runTime, scheduleTime, time                                        prometheus.Observer
}

// machine is the children of a state machine's collectors. m.mu is held.
func (m *Metrics) machine(arn string) *machineMetrics {
	if c := m.machines[arn]; c != nil {
		return c
	}
	c := &machineMetrics{
		transitions: m.transitions.WithLabelValues(arn), cost: m.cost.WithLabelValues(arn),
		started: m.execStarted.WithLabelValues(arn), succeeded: m.execSucceeded.WithLabelValues(arn),
		failed: m.execFailed.WithLabelValues(arn), aborted: m.execAborted.WithLabelValues(arn),
		timedOut: m.execTimedOut.WithLabelValues(arn), redriven: m.execRedriven.WithLabelValues(arn),
		execTime: m.execTime.WithLabelValues(arn),
	}
	m.machines[arn] = c
	return c
}

// taskChildren is the children of kind's collectors for label. m.mu is
// held.
func (m *Metrics) taskChildren(kind *kindMetrics, label string) *taskMetrics {
	key := taskKey{kind, label}
	if c := m.tasks[key]; c != nil {
		return c
	}
	c := &taskMetrics{
		scheduled: kind.scheduled.WithLabelValues(label), started: kind.started.WithLabelValues(label),
		succeeded: kind.succeeded.WithLabelValues(label), failed: kind.failed.WithLabelValues(label),
		timedOut: kind.timedOut.WithLabelValues(label), heartbeatTimedOut: kind.heartbeatTimedOut.WithLabelValues(label),
		runTime: kind.runTime.WithLabelValues(label), scheduleTime: kind.scheduleTime.WithLabelValues(label),
		time: kind.time.WithLabelValues(label),
	}
	m.tasks[key] = c
	return c
}

// kindMetrics are the metrics of one kind of task: activities, Lambda
// functions or service integrations.
type kindMetrics struct {
	scheduled, started, succeeded, failed, timedOut, heartbeatTimedOut *prometheus.CounterVec
	runTime, scheduleTime, time                                        *prometheus.HistogramVec
}

// pendingTask is a task between its scheduling and its end.
type pendingTask struct {
	c         *taskMetrics
	scheduled time.Time
	started   time.Time
}

// durations are the histograms' buckets, in seconds: from a millisecond
// to a day.
var durations = []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600}

// New makes the metrics, with load read from the engine when it is set
// later (SetEngine).
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), pending: map[string]map[int64]*pendingTask{},
		machines: map[string]*machineMetrics{}, tasks: map[taskKey]*taskMetrics{}}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	hist := func(name, help string, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: durations}, labels)
		m.reg.MustRegister(h)
		return h
	}
	const sm = "state_machine_arn"
	m.execStarted = counter("stepwise_executions_started_total", "Executions started (AWS: ExecutionsStarted).", sm)
	m.execSucceeded = counter("stepwise_executions_succeeded_total", "Executions that succeeded (AWS: ExecutionsSucceeded).", sm)
	m.execFailed = counter("stepwise_executions_failed_total", "Executions that failed (AWS: ExecutionsFailed).", sm)
	m.execAborted = counter("stepwise_executions_aborted_total", "Executions stopped (AWS: ExecutionsAborted).", sm)
	m.execTimedOut = counter("stepwise_executions_timed_out_total", "Executions that timed out (AWS: ExecutionsTimedOut).", sm)
	m.execRedriven = counter("stepwise_executions_redriven_total", "Executions redriven (AWS: ExecutionsRedriven).", sm)
	m.execThrottled = counter("stepwise_execution_throttled_total", "State transitions held back by the state-transition quota (AWS: ExecutionThrottled).", sm)
	m.transitions = counter("stepwise_state_transitions_total", "Billable state transitions of STANDARD executions, as AWS counts them.", sm)
	m.cost = counter("stepwise_estimated_aws_cost_usd_total", "What the STANDARD executions' state transitions would cost on AWS, in US dollars (at the server's --transition-price).", sm)
	m.warnings = counter("stepwise_task_warnings_total", "Tasks that ended with warning: their result met their state's warning rule (stepwise:warning/<state> tags).", sm, "state")
	m.prices = history.DefaultPrices
	m.execTime = hist("stepwise_execution_time_seconds", "Time from an execution's start to its end (AWS: ExecutionTime).", sm)

	kind := func(prefix, singular, awsName, label string) kindMetrics {
		return kindMetrics{
			scheduled:         counter("stepwise_"+prefix+"_scheduled_total", awsName+"s scheduled (AWS: "+awsName+"sScheduled).", label),
			started:           counter("stepwise_"+prefix+"_started_total", awsName+"s started (AWS: "+awsName+"sStarted).", label),
			succeeded:         counter("stepwise_"+prefix+"_succeeded_total", awsName+"s that succeeded (AWS: "+awsName+"sSucceeded).", label),
			failed:            counter("stepwise_"+prefix+"_failed_total", awsName+"s that failed (AWS: "+awsName+"sFailed).", label),
			timedOut:          counter("stepwise_"+prefix+"_timed_out_total", awsName+"s that timed out (AWS: "+awsName+"sTimedOut).", label),
			heartbeatTimedOut: counter("stepwise_"+prefix+"_heartbeat_timed_out_total", awsName+"s whose heartbeat timed out (AWS: "+awsName+"sHeartbeatTimedOut).", label),
			runTime:           hist("stepwise_"+singular+"_run_time_seconds", "Time from a task's start to its end (AWS: "+awsName+"RunTime).", label),
			scheduleTime:      hist("stepwise_"+singular+"_schedule_time_seconds", "Time a task waited scheduled before it started (AWS: "+awsName+"ScheduleTime).", label),
			time:              hist("stepwise_"+singular+"_time_seconds", "Time from a task's scheduling to its end (AWS: "+awsName+"Time).", label),
		}
	}
	m.activities = kind("activities", "activity", "Activity", "activity_arn")
	m.lambdas = kind("lambda_functions", "lambda_function", "LambdaFunction", "lambda_function_arn")
	m.integrations = kind("service_integrations", "service_integration", "ServiceIntegration", "resource")

	m.apiRequests = counter("stepwise_api_requests_total", "API requests by operation and HTTP status.", "operation", "code")
	m.apiThrottled = counter("stepwise_api_throttled_events_total", "API requests refused by a quota (AWS: ThrottledEvents).", "operation")
	m.apiConsumed = counter("stepwise_api_consumed_capacity_total", "Tokens the API's requests took from their quota (AWS: ConsumedCapacity).", "operation")

	m.batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "stepwise_commit_batch_size", Help: "Steps committed in one transaction.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}})
	m.commitLatency = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "stepwise_commit_latency_seconds", Help: "Time one transaction of steps took to commit.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}})
	m.replayTime = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "stepwise_replay_time_seconds", Help: "Time one execution's replay took when the engine resumed it.",
		Buckets: []float64{.0001, .001, .01, .1, 1, 10}})
	m.storageErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "stepwise_storage_errors_total", Help: "Transactions of steps the store failed to commit."})
	m.reg.MustRegister(m.batchSize, m.commitLatency, m.replayTime, m.storageErrors)

	m.eventsDelivered = counter("stepwise_status_events_delivered_total", "Status-change events a destination took.", "destination")
	m.eventsFailed = counter("stepwise_status_events_delivery_failures_total", "Failed deliveries of status-change events (each retried).", "destination")
	m.eventsLag = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "stepwise_status_events_lag_seconds",
		Help: "Age of the oldest status-change event a destination has not taken yet."}, []string{"destination"})
	m.reg.MustRegister(m.eventsLag)
	m.lateJobs = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "stepwise_late_jobs",
		Help: "Task states running past twice their usual duration (the median of their last 20 completed runs), on the leader."}, []string{sm, "state"})
	m.reg.MustRegister(m.lateJobs)
	m.logsWritten = prometheus.NewCounter(prometheus.CounterOpts{Name: "stepwise_execution_logs_written_total", Help: "Execution log records written to their destination."})
	m.logsDropped = prometheus.NewCounter(prometheus.CounterOpts{Name: "stepwise_execution_logs_dropped_total", Help: "Execution log records dropped: a full queue, or a destination that kept refusing them."})
	m.reg.MustRegister(m.logsWritten, m.logsDropped)
	m.retentionDeleted = prometheus.NewCounter(prometheus.CounterOpts{Name: "stepwise_retention_deleted_executions_total", Help: "Ended executions deleted after the retention period."})
	m.retentionBatch = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "stepwise_retention_batch_seconds", Help: "Time one retention batch held the store.",
		Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1}})
	m.reg.MustRegister(m.retentionDeleted, m.retentionBatch)

	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// WatchEngine exposes the engine's load as gauges.
func (m *Metrics) WatchEngine(e *engine.Engine) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "stepwise_running_executions", Help: "Executions running in the engine."},
			func() float64 { return float64(e.Load().Running) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "stepwise_pending_timers", Help: "Timers armed: Wait states, retry back-offs, timeouts."},
			func() float64 { return float64(e.Load().PendingTimers) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "stepwise_open_map_runs", Help: "Map runs open: started and not ended (AWS: ApproximateOpenMapRunCount)."},
			func() float64 { return float64(e.Load().MapRuns.Open) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "stepwise_open_map_run_limit", Help: "The most map runs open at once; more wait in the backlog (AWS: OpenMapRunLimit)."},
			func() float64 { return float64(e.Load().MapRuns.Limit) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "stepwise_map_run_backlog_size", Help: "Map runs waiting for an open one to end (AWS: ApproximateMapRunBacklogSize)."},
			func() float64 { return float64(e.Load().MapRuns.Backlog) }),
	)
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Registry is the metrics' registry (for tests and more collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Node names the server in the metrics: stepwise_node_info{node_id} 1.
func (m *Metrics) Node(id string) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "stepwise_node_info", Help: "The server's node id among the servers of its database (always 1)."}, []string{"node_id"})
	m.reg.MustRegister(g)
	g.WithLabelValues(id).Set(1)
}

// BatchCommitted counts a transaction of steps.
func (m *Metrics) BatchCommitted(steps []*store.Step, took time.Duration, err error) {
	if err != nil {
		m.storageErrors.Inc()
		return
	}
	m.batchSize.Observe(float64(len(steps)))
	m.commitLatency.Observe(took.Seconds())
}

// Resumed times an execution's replay.
func (m *Metrics) Resumed(_ string, took time.Duration) { m.replayTime.Observe(took.Seconds()) }

// StepCommitted counts what a step's history events tell. Most steps
// (a hand-out, a heartbeat, a Pass state) count little: the children of
// their labels are cached, so none hashes label values.
func (m *Metrics) StepCommitted(s *engine.CommittedStep) {
	x := s.Execution
	var n int
	if !s.Express {
		n = history.StateTransitions(s.Events)
	}
	warnings := engine.StepWarnings(s)
	m.mu.Lock()
	defer m.mu.Unlock()
	var mc *machineMetrics
	sm := func() *machineMetrics {
		if mc == nil {
			mc = m.machine(x.StateMachineArn)
		}
		return mc
	}
	if n > 0 {
		sm().transitions.Add(float64(n))
		sm().cost.Add(m.prices.Standard(n))
	}
	for _, w := range warnings {
		m.warnings.WithLabelValues(x.StateMachineArn, w.State).Inc()
	}
	for _, ev := range s.Events {
		switch ev.Type {
		case history.EventExecutionStarted:
			sm().started.Inc()
		case history.EventExecutionRedriven:
			sm().redriven.Inc()
		case history.EventExecutionSucceeded:
			sm().succeeded.Inc()
			m.ended(sm(), x, ev)
		case history.EventExecutionFailed:
			sm().failed.Inc()
			m.ended(sm(), x, ev)
		case history.EventExecutionAborted:
			sm().aborted.Inc()
			m.ended(sm(), x, ev)
		case history.EventExecutionTimedOut:
			sm().timedOut.Inc()
			m.ended(sm(), x, ev)
		default:
			if taskEvent(ev.Type) {
				m.task(s, ev)
			}
		}
	}
}

// taskEvent says whether an event may be one of an activity, a Lambda
// function or a service integration.
func taskEvent(t history.EventType) bool {
	return strings.HasPrefix(string(t), "Task") || strings.HasPrefix(string(t), "Activity") || strings.HasPrefix(string(t), "LambdaFunction")
}

// ended times an execution and forgets its tasks. m.mu is held.
func (m *Metrics) ended(mc *machineMetrics, x *store.Execution, ev *history.Event) {
	mc.execTime.Observe(seconds(x.StartDate, ev.Timestamp))
	delete(m.pending, x.Arn)
}

// task counts an event of an activity, a Lambda function or a service
// integration. Activity and Lambda events after the scheduled one do not
// name their resource: it is found through previousEventId, or from the
// task the step took. m.mu is held.
func (m *Metrics) task(s *engine.CommittedStep, ev *history.Event) {
	arn := s.Execution.Arn
	schedule := func(kind *kindMetrics, label string) {
		c := m.taskChildren(kind, label)
		c.scheduled.Inc()
		byID := m.pending[arn]
		if byID == nil {
			byID = map[int64]*pendingTask{}
			m.pending[arn] = byID
		}
		byID[ev.ID] = &pendingTask{c: c, scheduled: ev.Timestamp}
	}
	// lookup finds the task an event follows; a task the process did not
	// see scheduled (before a restart) is named by fallback, else by the
	// task the step took.
	lookup := func(kind *kindMetrics, fallback string) *pendingTask {
		if p := m.pending[arn][ev.PreviousEventID]; p != nil {
			delete(m.pending[arn], ev.PreviousEventID)
			return p
		}
		if fallback == "" && s.Task != nil {
			fallback = s.Task.Resource
		}
		if fallback == "" {
			fallback = "unknown"
		}
		return &pendingTask{c: m.taskChildren(kind, fallback)}
	}
	start := func(kind *kindMetrics, fallback string) {
		p := lookup(kind, fallback)
		p.c.started.Inc()
		if !p.scheduled.IsZero() {
			p.c.scheduleTime.Observe(seconds(p.scheduled, ev.Timestamp))
		}
		p.started = ev.Timestamp
		if m.pending[arn] == nil {
			m.pending[arn] = map[int64]*pendingTask{}
		}
		m.pending[arn][ev.ID] = p
	}
	end := func(kind *kindMetrics, fallback string, outcome func(c *taskMetrics) prometheus.Counter) {
		p := lookup(kind, fallback)
		outcome(p.c).Inc()
		if !p.started.IsZero() {
			p.c.runTime.Observe(seconds(p.started, ev.Timestamp))
		}
		if !p.scheduled.IsZero() {
			p.c.time.Observe(seconds(p.scheduled, ev.Timestamp))
		}
	}
	succeeded := func(c *taskMetrics) prometheus.Counter { return c.succeeded }
	failed := func(c *taskMetrics) prometheus.Counter { return c.failed }
	timedOut := func(c *taskMetrics) prometheus.Counter { return c.timedOut }
	heartbeat := func(c *taskMetrics) prometheus.Counter { return c.heartbeatTimedOut }
	taskResource := func(d *history.TaskEventDetails) string {
		if d == nil {
			return ""
		}
		return d.Resource
	}

	switch ev.Type {
	case history.EventActivityScheduled:
		schedule(&m.activities, ev.ActivityScheduledEventDetails.Resource)
	case history.EventActivityStarted:
		start(&m.activities, "")
	case history.EventActivitySucceeded:
		end(&m.activities, "", succeeded)
	case history.EventActivityFailed:
		end(&m.activities, "", failed)
	case history.EventActivityTimedOut:
		if d := ev.ActivityTimedOutEventDetails; d != nil && d.Error != nil && *d.Error == "States.HeartbeatTimeout" {
			end(&m.activities, "", heartbeat)
		} else {
			end(&m.activities, "", timedOut)
		}
	case history.EventLambdaFunctionScheduled:
		schedule(&m.lambdas, ev.LambdaFunctionScheduledEventDetails.Resource)
	case history.EventLambdaFunctionStarted:
		start(&m.lambdas, "")
	case history.EventLambdaFunctionSucceeded:
		end(&m.lambdas, "", succeeded)
	case history.EventLambdaFunctionFailed:
		end(&m.lambdas, "", failed)
	case history.EventLambdaFunctionTimedOut:
		end(&m.lambdas, "", timedOut)
	case history.EventTaskScheduled:
		schedule(&m.integrations, ev.TaskScheduledEventDetails.Resource)
	case history.EventTaskStarted:
		start(&m.integrations, taskResource(ev.TaskStartedEventDetails))
	case history.EventTaskSucceeded:
		end(&m.integrations, taskResource(ev.TaskSucceededEventDetails), succeeded)
	case history.EventTaskFailed:
		end(&m.integrations, taskResource(ev.TaskFailedEventDetails), failed)
	case history.EventTaskTimedOut:
		d := ev.TaskTimedOutEventDetails
		if d != nil && d.Error != nil && *d.Error == "States.HeartbeatTimeout" {
			end(&m.integrations, taskResource(d), heartbeat)
		} else {
			end(&m.integrations, taskResource(d), timedOut)
		}
	}
}

// SetPrices sets the prices the estimated cost is counted at (before the
// engine runs).
func (m *Metrics) SetPrices(p history.Prices) { m.prices = p }

// seconds is the time from from to to in seconds, never negative: a
// history stamped by a clock that once went back (a virtual clock before
// it was kept across restarts) does not observe a negative duration.
func seconds(from, to time.Time) float64 { return max(0, to.Sub(from).Seconds()) }

// LateJobs sets the gauge of the jobs running late: how many run of each
// state machine's state (keys: the state machine's ARN and the state's
// name); the others are zeroed.
func (m *Metrics) LateJobs(counts map[[2]string]int) {
	m.lateJobs.Reset()
	for k, n := range counts {
		m.lateJobs.WithLabelValues(k[0], k[1]).Set(float64(n))
	}
}
