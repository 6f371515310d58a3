// Package engine is the durable runtime: it runs executions with the pure
// interpreter and makes every step durable before anything else sees it.
//
// # A step
//
//	outside event ─► lock the execution ─► interp.Step ─► one store write:
//	  (start, timer,                          │            execution row (version checked)
//	   task result,                           │            + history events
//	   stop)                                  │            + the event itself (replay log)
//	                                          │            + timers and tasks added/removed
//	                                          ▼
//	                               commands carried out only after the commit:
//	                               arm timers, dispatch tasks
//
// A step is a pipeline: the step loop (exec.go) calls its stages in this
// order, each in a file of its own, and a stage calls only helpers below
// it, never a stage before it:
//
//	load       load.go       the execution: a new one (a start), the one in memory, or
//	                         one rebuilt from the store by replaying its log
//	own        own.go        the step is taken here, under the execution's lock, or sent
//	                         to the node of a cluster that owns the execution
//	interpret  interpret.go  the interpreter takes the event: history events, commands
//	throttle   throttle.go   the transition quota holds the step back
//	write      write.go      the store work of the step and the row it leaves
//	commit     commit.go     the step made durable (the committer); the live execution
//	                         moves on to the row it left
//	observe    observe.go    the observer told of the committed step
//	effects    effects.go    the commands carried out: timers armed, tasks dispatched
//
// StartExecution takes a new execution through them (nothing to own);
// every other outside event enters at apply (a timer's, a task's result,
// SendTask*, StopExecution), and the loop (stepVia, then stepLocked and
// commitLocked, where the activity hand-out joins it) takes it through all
// of them. What the effects set going comes back as an outside event: a
// step of its own, from the top of the loop. The helpers below the stages
// are the clock and the work it waits for (clock.go), the timer queue
// (timers.go), the call gates (gate.go), the replay log's entries
// (replaylog.go), the store's health (health.go) and a cluster's ownership
// (cluster.go).
//
// Writes from many executions are grouped into one transaction by the
// committer, so throughput comes from doing less per step, not from
// skipping durability.
//
// # State
//
// Running executions are kept in memory. What the store holds is enough to
// rebuild one exactly: the definition revision, the input, and the replay
// log of outside events with the times they were applied. The interpreter
// is deterministic (ids, jitter and random numbers derive from the
// execution), so replaying the log through it reproduces the state and
// the history already written. On start the engine rebuilds every RUNNING
// execution, re-arms its timers from the store and dispatches again every
// task whose result was not recorded (at-least-once, as AWS documents).
//
// # Tasks
//
// A dispatched task goes to the runner chosen in one place (dispatch.go):
// mocked, map run and item spool (package runner, with the engine as
// its host), result write, item read, activity (package activity: the
// queue, its pollers and the task tokens; the hand-out is a step, here),
// states:startExecution (package nested, with the engine as its host),
// then the configured runner. The step loop knows only the seam (package
// task): Run, Cancel, and the result that comes back as a step.
//
// # Rooms
//
// The engine keeps the step loop, commits, timers, the clock and replay;
// the rest lives beside it, each in a package of its own:
//
//	engine/task            the seam between the step loop and the task runners
//	engine/activity        activities: the runner, the queue and its pollers, task tokens
//	engine/nested          states:startExecution: child executions, with the engine as host
//	engine/maprun       distributed Maps: a map run's children as executions, with the
//	                       engine as host; the item spool
//	engine/internal/node   the protocol between a cluster's nodes: lease, wake-ups, requests
//
// # A store that cannot write
//
// A commit that fails with store.ErrUnavailable is retried with back-off
// (see health.go): the engine's own steps until they commit, a client's
// for a bounded time before the client is answered ServiceUnavailable and
// the step dropped. Health reports the episode.
//
// # Evaluations that run long
//
// Every evaluation runs under the budget of Config.EvalLimits (see package
// budget). StopExecution cuts the step in flight short and stops the
// execution where it is; Halt abandons the steps in flight, uncommitted,
// for a shutdown. What a deadline or a stop cut short is written in the
// replay log with the step, so a replay ends it at the same point.
//
// # Time
//
// The real clock is injected; execution time is a virtual clock on it
// (see clock.go). Every Wait state, retry back-off, task timeout,
// heartbeat timeout and execution timeout is a timer with a virtual
// deadline; timers fire in deadline order, and history timestamps are
// virtual time.
//
//	WaitTimeScale F > 0   execution time runs 1/F times as fast as real time
//	WaitTimeScale 0       the clock jumps to the next timer whenever no step
//	                      is in flight: every timer fires at once
//	TimeSkip              execution time runs at the real rate, and jumps to
//	                      the next timer only while no step is in flight and
//	                      no task waits on a worker, a callback or a service
//	                      (a time-skipping test server)
//
// Any clock but real time is kept in the store and resumes where it
// stopped after a restart, shared by a cluster's nodes; Alarm arms a
// deadline of outside work (a schedule's slot), which fires in order with
// the timers when the clock reaches it, but which the clock never jumps
// to for its own sake. AdvanceClock moves a virtual clock by hand.
package engine
