package engine

import (
	"time"

	"stepwise/history"
	"stepwise/interp"
)

// The interpret stage: the interpreter (package interp, pure) takes the
// step's event and returns the history events it wrote and the commands
// for the engine (timers, tasks). A start is interp.Start; every other
// step interp.Step, here. Nothing it did is seen outside the execution
// until the commit.

// interpret runs the interpreter on ev at the execution time, never
// before the execution's start; l.mu is held.
func (e *Engine) interpret(l *liveExecution, ev interp.Event) (time.Time, []*history.Event, []interp.Command, error) {
	now := e.now()
	if now.Before(l.row.StartDate) {
		now = l.row.StartDate
	}
	events, cmds, err := l.x.Step(ev, now)
	return now, events, cmds, err
}
