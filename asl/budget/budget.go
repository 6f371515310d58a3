// Package budget bounds what one evaluation of a definition's expressions
// (JSONata, JSONPath, intrinsic functions) may consume, and lets the caller
// interrupt it.
//
// # Limits
//
// A Meter counts the steps an evaluation takes (nodes evaluated, path
// segments applied, functions called) and the bytes of the values it
// builds, and watches a wall-clock deadline. Steps and bytes are
// deterministic: the same evaluation over the same input stops at the
// same point every time, so a replay reproduces the failure. The deadline
// and interrupts are not: a caller that replays records how, and after how
// many steps, an evaluation was cut short (Meter.End), and has the replayed
// evaluation end in the same way at the same step (Meter.Replay).
//
//	Step() ──steps < check──► nil          (the hot path: one add, one compare)
//	   │
//	   └──every CheckEvery steps──► replayed end reached? ──► as recorded
//	                                 interrupted?          ──► panic(Interrupt)
//	                                 past the deadline?    ──► *Error{Limit: "time"}
//	                                 past the step limit?  ──► *Error{Limit: "steps"}
//
// Bytes are counted before a large value is built (Meter.Bytes), so an
// evaluation that would build gigabytes fails before it takes the memory.
//
// # Interrupts
//
// An interrupt (the execution is being stopped, the server shuts down)
// does not fail the evaluation: it unwinds it with a panic of Interrupt,
// which the interpreter's step recovers; no code in between recovers it.
// A nil *Meter measures nothing and never interrupts.
package budget

import (
	"cmp"
	"fmt"
	"math"
	"time"
)

// Defaults of Limits.
const (
	// DefaultSteps is about a second of evaluation on one core.
	DefaultSteps = 10_000_000
	// DefaultBytes bounds the values one evaluation builds: 64 MiB,
	// 256 times the default payload limit, so an expression may build
	// large intermediate values but never gigabytes.
	DefaultBytes = 64 << 20
	// DefaultTime is the wall-clock limit of one evaluation.
	DefaultTime = 5 * time.Second
)

// CheckEvery is how many steps pass between looks at the clock and the
// interrupt flag.
const CheckEvery = 1024

// Limits bound one evaluation. A zero field takes its default; a negative
// one means no bound.
type Limits struct {
	Steps int64
	Bytes int64
	Time  time.Duration
}

// WithDefaults returns l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	l.Steps = cmp.Or(l.Steps, DefaultSteps)
	l.Bytes = cmp.Or(l.Bytes, DefaultBytes)
	l.Time = cmp.Or(l.Time, DefaultTime)
	return l
}

// Validate reports a limit that cannot be used.
func (l Limits) Validate() error {
	if l.Time > 0 && l.Time < time.Millisecond {
		return fmt.Errorf("evaluation time limit %s is below 1ms", l.Time)
	}
	return nil
}

// Error is an evaluation that went past one of its limits.
type Error struct {
	// Limit is "steps", "bytes" or "time".
	Limit string
	// Max is the limit: a count of steps or bytes, or nanoseconds.
	Max int64
}

func (e *Error) Error() string {
	switch e.Limit {
	case "bytes":
		return fmt.Sprintf("the evaluation built values larger than its limit of %d bytes", e.Max)
	case "time":
		return fmt.Sprintf("the evaluation ran longer than its time limit of %s", time.Duration(e.Max))
	}
	return fmt.Sprintf("the evaluation took more than its limit of %d steps", e.Max)
}

// interrupt is the type of Interrupt.
type interrupt struct{}

func (interrupt) String() string { return "evaluation interrupted" }

// Interrupt is the value a Meter panics with when its evaluation is
// interrupted.
var Interrupt any = interrupt{}

// IsInterrupt reports whether a recovered panic value is Interrupt.
func IsInterrupt(r any) bool { _, ok := r.(interrupt); return ok }

// End says how an evaluation was cut short from outside.
type End int8

const (
	NotEnded    End = iota
	TimedOut        // it ran past its deadline and failed
	Interrupted     // it was interrupted: it panicked with Interrupt
)

// Meter measures one evaluation.
type Meter struct {
	steps, maxSteps int64
	bytes, maxBytes int64
	check           int64 // the step count at which to look at the clock next
	maxTime         time.Duration
	deadline        time.Time // set at the first check
	now             func() time.Time
	interrupted     func() bool
	end             End   // how the evaluation was cut short
	endAt           int64 // and at which step count
	replay          End   // how a replayed evaluation is to end, at replayAt
	replayAt        int64
	err             *Error
}

// New returns a meter for one evaluation with limits l (defaults filled
// in). now reads the wall clock for the deadline; nil means no deadline.
// interrupted, when set, is polled every CheckEvery steps.
func New(l Limits, now func() time.Time, interrupted func() bool) *Meter {
	m := &Meter{}
	m.Init(l, now, interrupted)
	return m
}

// Init sets m up as New does, for a caller that allocates meters in
// blocks.
func (m *Meter) Init(l Limits, now func() time.Time, interrupted func() bool) {
	l = l.WithDefaults()
	*m = Meter{
		maxSteps: l.Steps, maxBytes: l.Bytes, maxTime: l.Time,
		now: now, interrupted: interrupted,
	}
	if m.maxSteps < 0 {
		m.maxSteps = math.MaxInt64
	}
	if m.maxBytes < 0 {
		m.maxBytes = math.MaxInt64
	}
	if m.maxTime < 0 {
		m.maxTime, m.now = 0, nil
	}
	m.check = m.nextCheck()
}

// End reports how the evaluation was cut short from outside (NotEnded if
// it was not) and after how many steps.
func (m *Meter) End() (End, int64) {
	if m == nil {
		return NotEnded, 0
	}
	return m.end, m.endAt
}

// Replay makes the evaluation end as an earlier run of it ended, when it
// reaches the same step count: a replay fails the evaluations that ran out
// of time, and interrupts those that were interrupted, at the same point,
// however fast the machine is.
func (m *Meter) Replay(how End, at int64) {
	if how == NotEnded {
		return
	}
	m.replay, m.replayAt = how, at
	m.check = min(m.check, at)
}

// Err returns the limit the evaluation went past, if any. Once past a
// limit, every later check fails with the same error.
func (m *Meter) Err() error {
	if m == nil || m.err == nil {
		return nil
	}
	return m.err
}

// Remaining is how many more bytes the evaluation may build.
func (m *Meter) Remaining() int {
	if m == nil || m.maxBytes-m.bytes > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(max(m.maxBytes-m.bytes, 0))
}

// Step counts one step.
func (m *Meter) Step() error {
	if m == nil {
		return nil
	}
	m.steps++
	if m.steps < m.check {
		return nil
	}
	return m.slow()
}

// Steps counts n steps at once (a function that loops over n items).
func (m *Meter) Steps(n int) error {
	if m == nil {
		return nil
	}
	m.steps += int64(n)
	if m.steps < m.check {
		return nil
	}
	return m.slow()
}

// Bytes counts n bytes of values built. Call it before building a large
// value, so an evaluation fails before it takes the memory.
func (m *Meter) Bytes(n int) error {
	if m == nil {
		return nil
	}
	if m.err != nil {
		return m.err
	}
	m.bytes += int64(n)
	if m.bytes > m.maxBytes || n < 0 {
		m.err = &Error{Limit: "bytes", Max: m.maxBytes}
		return m.err
	}
	return nil
}

func (m *Meter) slow() error {
	if m.err != nil {
		return m.err
	}
	if m.replay != NotEnded && m.steps >= m.replayAt {
		return m.stop(m.replay)
	}
	if m.interrupted != nil && m.interrupted() {
		return m.stop(Interrupted)
	}
	if m.now != nil {
		now := m.now()
		if m.deadline.IsZero() {
			m.deadline = now.Add(m.maxTime)
		} else if !now.Before(m.deadline) {
			return m.stop(TimedOut)
		}
	}
	if m.steps > m.maxSteps {
		m.err = &Error{Limit: "steps", Max: m.maxSteps}
		return m.err
	}
	m.check = m.nextCheck()
	return nil
}

// stop cuts the evaluation short: a timeout fails it, an interrupt
// unwinds it.
func (m *Meter) stop(how End) error {
	m.end, m.endAt = how, m.steps
	if how == Interrupted {
		panic(Interrupt)
	}
	m.err = &Error{Limit: "time", Max: int64(cmp.Or(m.maxTime, DefaultTime))}
	return m.err
}

// nextCheck is the step count of the next look at the clock: CheckEvery
// steps on, just past the step limit, or where a replayed end is due.
func (m *Meter) nextCheck() int64 {
	next := m.steps + CheckEvery
	if m.maxSteps < math.MaxInt64 && next > m.maxSteps+1 {
		next = m.maxSteps + 1
	}
	if m.replay != NotEnded {
		next = min(next, m.replayAt)
	}
	return next
}
