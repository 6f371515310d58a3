package engine

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"stepwise/asl"
	"stepwise/asl/budget"
	"stepwise/engine/activity"
	"stepwise/engine/internal/node"
	"stepwise/engine/maprun"
	"stepwise/engine/nested"
	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/internal/defcache"
	"stepwise/internal/recent"
	"stepwise/interp"
	"stepwise/store"
)

// Defaults of Config.
const (
	DefaultMaxBatch = 256
)

// Config configures an Engine.
type Config struct {
	Region  string
	Account string
	// WaitTimeScale is the real time a second of execution time takes:
	// timers (Wait states, retry back-offs, timeouts) take WaitTimeScale
	// times their time, and history timestamps advance 1/WaitTimeScale
	// times as fast as real time. 0 fires every timer at once, in order,
	// task timeouts included. Negative is invalid. Unused with TimeSkip.
	WaitTimeScale float64
	// TimeSkip makes time skip as on a time-skipping test server: while
	// no step is in flight and no task waits on the outside (a worker, a
	// callback, a service call), the clock jumps to the next timer; while
	// one does, time passes at the real rate. History timestamps show the
	// virtual time.
	TimeSkip bool
	// PayloadLimit and MaxHistoryEvents are passed to the interpreter.
	PayloadLimit     int
	MaxHistoryEvents int
	// MaxBatch is the most steps committed in one transaction.
	MaxBatch int
	// EvalLimits bound every evaluation of a definition's expressions
	// (JSONata, JSONPath, intrinsic functions); zero fields take
	// budget's defaults.
	EvalLimits budget.Limits
	// EvalClock reads the wall clock for the evaluations' time limit
	// (whatever Now says, an evaluation's time is real); nil means
	// time.Now.
	EvalClock func() time.Time
	// Tasks carries out Task states other than activities; nil fails
	// every such task.
	Tasks task.Runner
	// Mocks, when set, answers the tasks of executions started with a
	// mock test case (start.Params.TestCase).
	Mocks task.Mocks
	// TokenKey keys the hash that makes task tokens unguessable. It must
	// stay the same across restarts for tokens handed out before one to
	// work after; nil means a random key for this process only.
	TokenKey []byte
	// Definitions caches parsed definitions; a server shares one with its
	// service. Nil means a cache of the engine's own.
	Definitions *defcache.Cache
	// StatusNotice, when set, makes every step that changes a STANDARD
	// execution's status (or redrives it) write a notice to the store's
	// outbox in the same transaction: the body StatusNotice renders of
	// the execution's row as the step left it, at the step's time.
	StatusNotice func(row *store.Execution, at time.Time) []byte
	// Observer, when set, is told of every committed step, commit and
	// resumption.
	Observer Observer
	// TaskTrace, when set, gives a task the W3C traceparent of its span
	// (Task.TraceParent, "" when its execution is not traced), which its
	// runner passes on.
	TaskTrace func(row *store.Execution, req *interp.TaskRequest) string
	// Transitions, when set, is the quota of the state transitions of
	// STANDARD executions: a step waits for its transitions before it
	// commits (see throttle).
	Transitions TransitionLimiter
	// Cluster, when set, makes the engine one node of several sharing
	// the store, which must implement store.Cluster (see cluster.go).
	Cluster *ClusterConfig
	// ClockFloor, when set, is the least execution time a kept (virtual)
	// clock starts from, beside what the store's clock row holds: the
	// last slot a schedule fired, stamped before the clock was kept.
	ClockFloor func(ctx context.Context) (time.Time, error)
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger

	// loseChildStart, a test hook (nil outside tests), is asked before a
	// map run starts a child: true drops the start as a server that died
	// before it committed would (the child is not stored, its start
	// never returns).
	loseChildStart func(mapRunArn string, index int) bool
}

func (c *Config) validate() error {
	if c.WaitTimeScale < 0 {
		return errors.New("engine: WaitTimeScale must not be negative")
	}
	if c.Region == "" || c.Account == "" {
		return errors.New("engine: Region and Account are required")
	}
	if err := c.EvalLimits.Validate(); err != nil {
		return fmt.Errorf("engine: EvalLimits: %w", err)
	}
	if c.Cluster != nil {
		if c.TimeSkip {
			return errors.New("engine: TimeSkip needs the one clock of a single node, not a cluster")
		}
		if err := c.Cluster.validate(); err != nil {
			return err
		}
		if c.WaitTimeScale == 0 {
			return errors.New("engine: a WaitTimeScale of 0 jumps the clock, which needs the one clock of a single node, not a cluster")
		}
	}
	return nil
}

// Engine runs executions durably on a store.
type Engine struct {
	cfg   Config
	store store.Driver
	log   *slog.Logger

	machines *defcache.Cache // parsed definitions, shared with the service
	// activityFound are the activities Task states found lately.
	activityFound *recent.Cache[struct{}]

	mu   sync.Mutex
	live map[string]*liveExecution

	commits *committer
	clock   *clock
	// The stored clock (see clock.go): what it was stored up to, and
	// keepClock's wake-up after a jump (nil while not stored).
	clockMu      sync.Mutex
	clockCeiling time.Time
	clockKick    chan struct{}
	clockStopped bool          // stopClock stored where it stopped: no more storing
	advancing    chan struct{} // one AdvanceClock at a time (a semaphore)
	alarms       alarms
	work         *work
	timers       *timerQueue
	activities   *activity.Queue  // a single node's activity tasks, and every node's pollers
	activity     *activity.Runner // activity tasks, on activities or (in a cluster) the store's queue
	takes        takeGroups       // in a cluster, the takes of this node's pollers from the store's queue
	starter      *start.Starter   // the one way in, for the children of nested and map runs
	nested       *nested.Runner   // states:startExecution tasks
	mapRuns      *maprun.Runner   // distributed Maps' map runs
	gates        callGates
	tokens       *activity.Tokens

	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup // long-lived loops
	steps   sync.WaitGroup // steps in flight
	stopped bool
	// halting is set when the engine stops: evaluations in flight are
	// abandoned, their steps not committed.
	halting atomic.Bool
	halted  chan struct{} // closed when halting is set
	halt    sync.Once
	health  storeHealth

	releasePolls     chan struct{} // closed by ReleasePolls
	releasePollsOnce sync.Once
	resumed          chan struct{} // closed by Start's resumption
	waiters          waiters       // executions waiting for their exclusive group (exclusive.go)

	cl       *node.Node     // the engine's part in a cluster; nil for a single node
	handlers sync.WaitGroup // requests of other nodes being carried out
}

// New returns an engine; Start must be called before use.
func New(drv store.Driver, cfg Config) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.MaxBatch = cmp.Or(cfg.MaxBatch, DefaultMaxBatch)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.EvalClock == nil {
		cfg.EvalClock = time.Now
	}
	if cfg.Definitions == nil {
		cfg.Definitions = defcache.New(0)
	}
	if cfg.Tasks == nil {
		cfg.Tasks = task.NoIntegrations{}
	}
	if len(cfg.TokenKey) == 0 {
		cfg.TokenKey = make([]byte, 32)
		if _, err := rand.Read(cfg.TokenKey); err != nil {
			return nil, fmt.Errorf("engine: token key: %w", err)
		}
	}
	activities := activity.NewQueue()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{
		releasePolls:  make(chan struct{}),
		resumed:       make(chan struct{}),
		waiters:       waiters{kick: make(chan struct{}, 1)},
		halted:        make(chan struct{}),
		advancing:     make(chan struct{}, 1),
		cfg:           cfg,
		store:         drv,
		log:           cfg.Logger,
		machines:      cfg.Definitions,
		activityFound: recent.New[struct{}](time.Second, defcache.DefaultSize, nil),
		live:          map[string]*liveExecution{},
		activities:    activities,
		tokens:        activity.NewTokens(cfg.TokenKey),
	}
	if cfg.Cluster != nil {
		cl, err := newNode(e, drv, cfg.Cluster)
		if err != nil {
			return nil, err
		}
		e.cl = cl
	}
	e.health.log = cfg.Logger
	e.activity = &activity.Runner{Queue: activities}
	if e.cl != nil {
		e.activity.Shared = sharedQueue{cl: e.cl, local: activities, log: cfg.Logger, ctx: func() context.Context { return e.ctx }}
	}
	e.starter = start.New(start.Config{Store: drv.Executor(), Runs: e, Region: cfg.Region, Account: cfg.Account,
		PayloadLimit: cfg.PayloadLimit, Definitions: cfg.Definitions})
	e.nested = nested.New(childHost{e}, nested.Config{PayloadLimit: cfg.PayloadLimit, Logger: cfg.Logger})
	e.mapRuns = maprun.New(childHost{e}, maprun.Config{Region: cfg.Region, Account: cfg.Account, Now: e.now, Logger: cfg.Logger,
		Clustered: e.cl != nil, LoseStart: cfg.loseChildStart})
	e.cfg.Tasks = newChooser(e, cfg.Tasks)
	e.commits = newCommitter(drv, cfg.MaxBatch, cfg.Logger)
	e.commits.observer = cfg.Observer
	e.work = newWork()
	// outside: whether the clock waits for the tasks waiting on the
	// outside before it jumps (skip) or an advance steps it.
	outside := true
	switch {
	case cfg.TimeSkip:
		e.clock = newClock(cfg.Now, 1)
		e.timers = newTimerQueue(e.clock, func(to time.Time) bool { return e.work.jump(e.clock, to, true) })
	case cfg.WaitTimeScale == 0:
		outside = false
		e.clock = newClock(cfg.Now, 0)
		e.timers = newTimerQueue(e.clock, func(to time.Time) bool { return e.work.jump(e.clock, to, false) })
	default:
		e.clock = newClock(cfg.Now, cfg.WaitTimeScale)
		e.timers = newTimerQueue(e.clock, nil)
	}
	e.timers.step = e.timers.jump
	e.timers.ready = func() bool { return e.work.quiet(outside) }
	switch {
	case e.timers.jump != nil:
		e.work.idle = e.timers.poke // the clock may jump now
	case e.stored():
		// A scaled clock moves only when advanced, between steps and,
		// as under skip, while no task waits on the outside (so that an
		// advance does not time out a task that is running); the timer
		// loop need not wake when the engine goes idle otherwise.
		e.timers.step = func(to time.Time) bool { return e.work.jump(e.clock, to, true) }
		e.work.idle = e.timers.pokeAdvancing
	}
	return e, nil
}

// Start launches the committer and the timer loop, and resumes every
// RUNNING execution from the store in the background: a server need not
// wait for the replays to listen, and a request for an execution not
// resumed yet resumes it itself (or waits for the replay under way).
// Resumed is closed when every execution has been resumed.
//
// In a cluster, Start registers the node first (failing when it cannot),
// and resumes the executions it claims: at start, those of nodes that are
// gone; later, those of nodes that die or stop.
func (e *Engine) Start(ctx context.Context) error {
	e.ctx, e.cancel = context.WithCancel(context.WithValue(context.WithoutCancel(ctx), internalKey{}, true))
	if err := e.startClock(ctx); err != nil {
		e.cancel()
		return err
	}
	if e.cl != nil {
		if err := e.joinCluster(ctx); err != nil {
			e.cancel()
			return err
		}
	}
	if e.clockKick != nil {
		e.wg.Go(func() { e.keepClock(e.ctx) })
	}
	e.wg.Go(func() { e.waitLoop(e.ctx) })
	e.wg.Add(3)
	go func() { defer e.wg.Done(); e.commits.run(e.ctx) }()
	go func() { defer e.wg.Done(); e.timers.run(e.ctx, e.fire) }()
	// Until every execution is rebuilt, the engine is not idle: the
	// clock must not skip past the timeouts of tasks not yet known.
	e.work.stepBegan()
	resumed := func() {
		e.work.stepEnded()
		close(e.resumed)
	}
	go func() {
		defer e.wg.Done()
		if e.cl != nil {
			e.claimLoop(resumed)
			return
		}
		defer resumed()
		if err := e.resume(e.ctx, e.listRunning()); err != nil {
			e.log.ErrorContext(e.ctx, "engine: resume failed", "error", err)
		}
	}()
	return nil
}

// Resumed is closed once the executions that were running when the engine
// started have been resumed (or their resumption failed and was logged).
func (e *Engine) Resumed() <-chan struct{} { return e.resumed }

// Halt abandons the evaluations in flight and every later one that runs
// long (their steps are not committed; the executions resume from the
// store on the next start), so that no expression holds a shutdown up.
// Stop halts too; a server calls Halt first when a signal asks it to end,
// before it waits for the requests in flight.
func (e *Engine) Halt() {
	e.halting.Store(true)
	e.halt.Do(func() { close(e.halted) })
}

// Stop stops taking work, lets steps in flight commit, and stops the loops.
// It is safe to call more than once.
func (e *Engine) Stop() {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return
	}
	e.stopped = true
	e.mu.Unlock()
	e.Halt()
	e.ReleasePolls()
	e.steps.Wait()
	if e.cl != nil {
		// What this node took from others is answered before its
		// executions go to them.
		e.handlers.Wait()
		e.leaveCluster()
	}
	e.cancel()
	e.wg.Wait()
	e.stopClock()
}

// now is the execution time: the virtual clock's.
func (e *Engine) now() time.Time { return e.clock.now().UTC().Truncate(time.Millisecond) }

// Now is the execution time, which history timestamps and stop dates are
// stamped with: the real time, unless the clock is scaled or skips.
func (e *Engine) Now() time.Time { return e.now() }

// listRunning pages through the RUNNING executions, for resume.
func (e *Engine) listRunning() func(ctx context.Context, limit int) ([]string, bool, error) {
	after := ""
	return func(ctx context.Context, limit int) ([]string, bool, error) {
		rows, err := e.store.Executor().ExecutionListRunning(ctx, after, limit)
		if err != nil {
			return nil, true, fmt.Errorf("list running executions: %w", err)
		}
		arns := make([]string, len(rows))
		for i, row := range rows {
			arns[i] = row.Arn
		}
		if len(rows) > 0 {
			after = rows[len(rows)-1].Arn
		}
		return arns, len(rows) < limit, nil
	}
}

// resume rebuilds the executions next names, a batch at a time until it
// says it is done, replaying several at once.
func (e *Engine) resume(ctx context.Context, next func(ctx context.Context, limit int) (arns []string, done bool, err error)) error {
	arns := make(chan string)
	var n atomic.Int64
	var workers sync.WaitGroup
	for range max(2, runtime.GOMAXPROCS(0)) {
		workers.Go(func() {
			for arn := range arns {
				if e.halting.Load() {
					continue
				}
				began := time.Now()
				if _, err := e.load(ctx, arn); err != nil {
					e.log.ErrorContext(ctx, "engine: resume failed", "execution_arn", arn, "error", err)
					continue
				}
				if e.cfg.Observer != nil {
					e.cfg.Observer.Resumed(arn, time.Since(began))
				}
				n.Add(1)
			}
		})
	}
	defer func() {
		close(arns)
		workers.Wait()
		if n.Load() > 0 {
			e.log.InfoContext(ctx, "engine: resumed running executions", "count", n.Load())
		}
	}()
	first := true
	for !e.halting.Load() {
		batch, done, err := next(ctx, 500)
		if err != nil {
			return err
		}
		if first && len(batch) > 0 {
			e.log.InfoContext(ctx, "engine: resuming running executions", "first_batch", len(batch))
		}
		first = false
		for _, arn := range batch {
			arns <- arn
		}
		if done {
			break
		}
	}
	return nil
}

// info builds the interpreter's view of an execution. The redrive count
// starts at 0: replaying the log's Redrive events counts them again.
func (e *Engine) info(row *store.Execution) interp.Info {
	return interp.Info{
		ExecutionArn:     row.Arn,
		Name:             row.Name,
		RoleArn:          row.RoleArn,
		StartTime:        row.StartDate,
		StateMachineArn:  row.StateMachineArn,
		StateMachineName: arnName(row.StateMachineArn),
		Region:           e.cfg.Region,
		Account:          e.cfg.Account,
	}
}

// options are the interpreter's options for an execution. Its
// evaluations are abandoned when the engine stops; a live execution's are
// also cut short by a stop (see liveExecution.interrupt).
func (e *Engine) options() interp.Options {
	return interp.Options{
		PayloadLimit: e.cfg.PayloadLimit, MaxHistoryEvents: e.cfg.MaxHistoryEvents, TaskToken: e.tokens.Make,
		Limits: e.cfg.EvalLimits, Clock: e.cfg.EvalClock, Interrupt: e.interruptHalting,
		ActivityExists: e.activityExists,
	}
}

// activityExists reports whether an activity exists. A store that cannot
// answer counts as yes: the step then fails to commit, or the task waits
// for a worker as usual.
// An activity found is trusted for a second (e.activityFound): every Task
// state of an activity asks, and deletes are rare; ForgetActivity makes
// this node's own deletes count at once.
func (e *Engine) activityExists(arn string) bool {
	if e.activityFound.Has(arn) {
		return true
	}
	look := e.activityFound.Look()
	_, err := e.store.Executor().ActivityGet(context.Background(), arn)
	if err == nil {
		e.activityFound.Put(arn, struct{}{}, look)
	}
	return !errors.Is(err, store.ErrNotFound)
}

// ForgetActivity says an activity is being deleted: a Task state scheduled
// on it from now on finds it missing (another node's delete is seen
// within a second).
func (e *Engine) ForgetActivity(arn string) { e.activityFound.Forget(arn) }

// abandon is the interruption of a step the engine does not commit.
var abandon = &interp.Interruption{}

// interruptHalting abandons evaluations when the engine stops.
func (e *Engine) interruptHalting() *interp.Interruption {
	if e.halting.Load() {
		return abandon
	}
	return nil
}

// isExpressArn says whether an execution ARN names an EXPRESS execution.
func isExpressArn(arn string) bool { return strings.Contains(arn, ":express:") }

// arnName returns the last ":"-separated part of an ARN.
func arnName(arn string) string {
	if i := strings.LastIndexByte(arn, ':'); i >= 0 {
		return arn[i+1:]
	}
	return arn
}

// machine returns the parsed definition of a revision.
//
// The children of a map run run on <state machine ARN>/<label>: the
// ItemProcessor of the distributed Map with that label (and those of a
// map run inside a child, on <state machine ARN>/<label>/<label>).
func (e *Engine) machine(ctx context.Context, smArn, revision string) (*asl.StateMachine, error) {
	key := defcache.Key(smArn, revision)
	if base, label := maprun.SplitLabel(smArn); label != "" {
		return e.machines.Get(key, func() (*asl.StateMachine, error) {
			m, err := e.machine(ctx, base, revision)
			if err != nil {
				return nil, err
			}
			// A nested map run's children run on <machine>/<outer>/<inner>.
			for _, l := range strings.Split(label, "/") {
				if m = maprun.Processor(m, l); m == nil {
					return nil, fmt.Errorf("revision %s has no distributed Map labelled %q", key, label)
				}
			}
			return m, nil
		})
	}
	return e.machines.Get(key, func() (*asl.StateMachine, error) {
		rev, err := e.store.Executor().RevisionGet(ctx, smArn, revision)
		if err != nil {
			return nil, fmt.Errorf("load revision %s: %w", key, err)
		}
		m, diags := asl.Parse([]byte(rev.Definition))
		if m == nil {
			return nil, fmt.Errorf("revision %s no longer parses: %v", key, diags)
		}
		return m, nil
	})
}

// remember caches a parsed definition the service already parsed.
func (e *Engine) remember(smArn, revision string, m *asl.StateMachine) {
	e.machines.Put(defcache.Key(smArn, revision), m)
}

// errStopped is returned for work offered after Stop.
var errStopped = task.ErrStopped

// beginStep registers a step in flight; it fails once the engine stops.
func (e *Engine) beginStep() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return errStopped
	}
	e.steps.Add(1)
	e.work.stepBegan()
	return nil
}

// endStep ends a step begun with beginStep.
func (e *Engine) endStep() {
	e.work.stepEnded()
	e.steps.Done()
}
