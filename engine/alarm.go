package engine

import (
	"context"
	"sync"
	"time"
)

// alarms are deadlines in execution time of work outside the executions
// (a schedule's next slot). They are armed in the timer queue under the
// empty execution ARN, so that the clock skips to them as to any timer.
type alarms struct {
	mu   sync.Mutex
	fire map[string]func(ctx context.Context)
}

// Alarm arms the alarm called name for execution time at, in place of
// the one of that name: fire is called, in a goroutine of its own, once
// the clock reaches at. Under time skipping (and at a wait-time scale of
// 0) the alarm counts as a timer: an idle engine jumps to it, and does not
// jump again until fire returns. A zero at disarms the alarm.
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
