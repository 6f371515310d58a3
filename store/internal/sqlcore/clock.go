package sqlcore

import (
	"context"
	"math"
	"time"

	"stepwise/store"
)

// clockStartSQL and clockAdvanceSQL take the larger of two values, which
// the dialects spell differently: New fills in Dialect.Greatest for %[1]s.
const (
	clockStartSQL = `INSERT INTO stepwise_clock (id, anchor_virtual, anchor_real, ceiling, renewed) VALUES (1, $1, $2, $1, $2)
		ON CONFLICT (id) DO UPDATE SET anchor_virtual = %[1]s(stepwise_clock.ceiling, $1), anchor_real = $2,
			ceiling = %[1]s(stepwise_clock.ceiling, $1), renewed = $2
		WHERE stepwise_clock.renewed < $3`
	clockGetSQL     = `SELECT anchor_virtual, anchor_real, ceiling, renewed FROM stepwise_clock WHERE id = 1`
	clockAdvanceSQL = `UPDATE stepwise_clock SET ceiling = %[1]s(ceiling, $1), renewed = $2 WHERE id = 1`
	clockStopSQL    = `UPDATE stepwise_clock SET ceiling = $1, renewed = 0 WHERE id = 1`
)

var _ store.ClockStore = (*Core)(nil)

// ClockStart returns the clock to run: the one stored when it is running,
// otherwise a new anchor from the stored ceiling.
func (c *Core) ClockStart(ctx context.Context, p *store.ClockStartParams) (*store.Clock, error) {
	since := int64(math.MaxInt64)
	if !p.RunningSince.IsZero() {
		since = Millis(p.RunningSince)
	}
	var clock *store.Clock
	err := c.conn.InTx(ctx, func(q Querier) error {
		if _, err := q.Exec(ctx, c.sql.clockStart, Millis(p.Floor), Millis(p.Real), since); err != nil {
			return err
		}
		var v, r, ceiling, renewed int64
		if err := q.QueryRow(ctx, clockGetSQL).Scan(&v, &r, &ceiling, &renewed); err != nil {
			return err
		}
		clock = &store.Clock{Virtual: FromMillis(v), Real: FromMillis(r), Ceiling: FromMillis(ceiling)}
		if renewed != 0 {
			clock.Renewed = FromMillis(renewed)
		}
		return nil
	})
	if err != nil {
		return nil, c.conn.Error("start clock", err)
	}
	return clock, nil
}

// ClockAdvance raises the clock's ceiling.
func (c *Core) ClockAdvance(ctx context.Context, p *store.ClockAdvanceParams) error {
	_, err := c.conn.Writer().Exec(ctx, c.sql.clockAdvance, Millis(p.Ceiling), Millis(p.Renewed))
	return c.conn.Error("advance clock", err)
}

// ClockStop stores where the clock stopped.
func (c *Core) ClockStop(ctx context.Context, at time.Time) error {
	_, err := c.conn.Writer().Exec(ctx, clockStopSQL, Millis(at))
	return c.conn.Error("stop clock", err)
}
