package engine

import (
	"context"
	"sync"
	"time"
)

// alarms are deadlines in execution time of work outside the executions
// (a schedule's next slot). They are armed in the timer queue under the
// empty execution ARN, so that they fire in order with the executions'
// timers; the clock never jumps to one for its own sake (timers.go).
type alarms struct {
	mu   sync.Mutex
	fire map[string]func(ctx context.Context)
}

// Alarm arms the alarm called name for execution time at, in place of
// the one of that name: fire is called, in a goroutine of its own, once
// the clock reaches at: by its run, by a jump to an execution's timer
// past it (time skipping, a wait-time scale of 0), or by AdvanceClock. A
// jump past it stops at it first, and does not go on until fire returns.
// A zero at disarms the alarm.
func (e *Engine) Alarm(name string, at time.Time, fire func(ctx context.Context)) {
	e.alarms.mu.Lock()
	defer e.alarms.mu.Unlock()
	if at.IsZero() {
		delete(e.alarms.fire, name)
		e.timers.remove("", name)
		return
	}
	if e.alarms.fire == nil {
		e.alarms.fire = map[string]func(context.Context){}
	}
	e.alarms.fire[name] = fire
	e.timers.add("", name, at)
}

// fireAlarm calls an alarm's function, after storing the clock's ceiling
// past its time: what the function stamps stays in the past after a
// restart.
func (e *Engine) fireAlarm(name string, done func()) {
	e.alarms.mu.Lock()
	fire := e.alarms.fire[name]
	e.alarms.mu.Unlock()
	go func() {
		defer done()
		if err := e.holdClock(e.ctx); err != nil {
			e.log.WarnContext(e.ctx, "engine: storing the execution time failed", "alarm", name, "error", err)
		}
		if fire != nil {
			fire(e.ctx)
		}
	}()
}
