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

// Source holds what the meters of many evaluations share: their limits,
// the clock of their deadline and the interrupt they poll.
type Source struct {
	maxSteps, maxBytes int64
	maxTime            time.Duration // 0: no deadline (nor without now)
	now                func() time.Time
	interrupted        func() bool
}

// NewSource returns the source of meters with limits l (defaults filled
// in). now reads the wall clock for the deadline; nil means no deadline.
// interrupted, when set, is polled every CheckEvery steps.
func NewSource(l Limits, now func() time.Time, interrupted func() bool) *Source {
	l = l.WithDefaults()
	s := &Source{maxSteps: l.Steps, maxBytes: l.Bytes, maxTime: l.Time, now: now, interrupted: interrupted}
	if s.maxSteps < 0 {
		s.maxSteps = math.MaxInt64
	}
	if s.maxBytes < 0 {
		s.maxBytes = math.MaxInt64
	}
	if s.maxTime < 0 {
		s.maxTime, s.now = 0, nil
	}
	return s
}

// Init makes m a fresh meter of s, for a caller that allocates meters in
// blocks.
func (s *Source) Init(m *Meter) {
	*m = Meter{src: s}
	m.check = m.nextCheck()
}

// Meter measures one evaluation. It holds no pointer but its source's, so
// that many of them cost the garbage collector little.
type Meter struct {
	src      *Source
	steps    int64
	bytes    int64
	check    int64 // the step count at which to look at the clock next
	deadline int64 // in Unix nanoseconds, set at the first check; 0: not yet
	endAt    int64 // the step count at which the evaluation was cut short
	replayAt int64 // and where a replayed evaluation is to be
	end      End   // how the evaluation was cut short
	replay   End   // how a replayed evaluation is to end
	failed   uint8 // the limit it went past: 0, or one of limitNames' indexes
}

// limitNames are the Error.Limit of Meter.failed.
var limitNames = [...]string{1: "steps", 2: "bytes", 3: "time"}

// New returns a meter for one evaluation with limits l; see NewSource.
func New(l Limits, now func() time.Time, interrupted func() bool) *Meter {
	m := &Meter{}
	NewSource(l, now, interrupted).Init(m)
	return m
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
	if m == nil || m.failed == 0 {
		return nil
	}
	return m.fail(m.failed)
}

// fail records that the evaluation went past limit (an index of
// limitNames) and returns its error.
func (m *Meter) fail(limit uint8) error {
	m.failed = limit
	e := &Error{Limit: limitNames[limit]}
	switch limit {
	case 1:
		e.Max = m.src.maxSteps
	case 2:
		e.Max = m.src.maxBytes
	case 3:
		e.Max = int64(cmp.Or(m.src.maxTime, DefaultTime))
	}
	return e
}

// Remaining is how many more bytes the evaluation may build.
func (m *Meter) Remaining() int {
	if m == nil || m.src.maxBytes-m.bytes > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(max(m.src.maxBytes-m.bytes, 0))
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
	if m.failed != 0 {
		return m.fail(m.failed)
	}
	m.bytes += int64(n)
	if m.bytes > m.src.maxBytes || n < 0 {
		return m.fail(2)
	}
	return nil
}

func (m *Meter) slow() error {
	if m.failed != 0 {
		return m.fail(m.failed)
	}
	if m.replay != NotEnded && m.steps >= m.replayAt {
		return m.stop(m.replay)
	}
	s := m.src
	if s.interrupted != nil && s.interrupted() {
		return m.stop(Interrupted)
	}
	if s.now != nil && s.maxTime > 0 {
		now := s.now().UnixNano()
		if m.deadline == 0 {
			m.deadline = now + int64(s.maxTime)
		} else if now >= m.deadline {
			return m.stop(TimedOut)
		}
	}
	if m.steps > s.maxSteps {
		return m.fail(1)
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
	return m.fail(3)
}

// nextCheck is the step count of the next look at the clock: CheckEvery
// steps on, just past the step limit, or where a replayed end is due.
func (m *Meter) nextCheck() int64 {
	next := m.steps + CheckEvery
	if max := m.src.maxSteps; max < math.MaxInt64 && next > max+1 {
		next = max + 1
	}
	if m.replay != NotEnded {
		next = min(next, m.replayAt)
	}
	return next
}
