package pgstore

import (
	"context"
	"math"
	"time"

	"stepwise/store"
)

const (
	clockStartSQL = `INSERT INTO stepwise_clock (id, anchor_virtual, anchor_real, ceiling, renewed) VALUES (1, $1, $2, $1, $2)
		ON CONFLICT (id) DO UPDATE SET anchor_virtual = GREATEST(stepwise_clock.ceiling, $1), anchor_real = $2,
			ceiling = GREATEST(stepwise_clock.ceiling, $1), renewed = $2
		WHERE stepwise_clock.renewed < $3`
	clockGetSQL     = `SELECT anchor_virtual, anchor_real, ceiling, renewed FROM stepwise_clock WHERE id = 1`
	clockAdvanceSQL = `UPDATE stepwise_clock SET ceiling = GREATEST(ceiling, $1), renewed = $2 WHERE id = 1`
	clockStopSQL    = `UPDATE stepwise_clock SET ceiling = $1, renewed = 0 WHERE id = 1`
)

var _ store.ClockStore = (*Executor)(nil)

// ClockStart returns the clock to run: the one stored when it is running,
// otherwise a new anchor from the stored ceiling.
func (e *Executor) ClockStart(ctx context.Context, p *store.ClockStartParams) (*store.Clock, error) {
	since := int64(math.MaxInt64)
	if !p.RunningSince.IsZero() {
		since = millis(p.RunningSince)
	}
	var c *store.Clock
	err := e.inTx(ctx, func(q querier) error {
		if _, err := q.Exec(ctx, clockStartSQL, millis(p.Floor), millis(p.Real), since); err != nil {
			return err
		}
		var v, r, ceiling, renewed int64
		if err := q.QueryRow(ctx, clockGetSQL).Scan(&v, &r, &ceiling, &renewed); err != nil {
			return err
		}
		c = &store.Clock{Virtual: fromMillis(v), Real: fromMillis(r), Ceiling: fromMillis(ceiling)}
		if renewed != 0 {
			c.Renewed = fromMillis(renewed)
		}
		return nil
	})
	if err != nil {
		return nil, interpretError("start clock", err)
	}
	return c, nil
}

// ClockAdvance raises the clock's ceiling.
func (e *Executor) ClockAdvance(ctx context.Context, p *store.ClockAdvanceParams) error {
	_, err := e.q().Exec(ctx, clockAdvanceSQL, millis(p.Ceiling), millis(p.Renewed))
	return interpretError("advance clock", err)
}

// ClockStop stores where the clock stopped.
func (e *Executor) ClockStop(ctx context.Context, at time.Time) error {
	_, err := e.q().Exec(ctx, clockStopSQL, millis(at))
	return interpretError("stop clock", err)
}
