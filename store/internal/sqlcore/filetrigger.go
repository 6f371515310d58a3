package sqlcore

import (
	"context"

	"stepwise/store"
)

const (
	fileTriggerColumns = `name, body, created_at, updated_at`
	fileTriggerPutSQL  = `INSERT INTO stepwise_file_trigger (` + fileTriggerColumns + `) VALUES ($1, $2, $3, $4)
		ON CONFLICT (name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at`
	fileTriggerGetSQL    = `SELECT ` + fileTriggerColumns + ` FROM stepwise_file_trigger WHERE name = $1`
	fileTriggerListSQL   = `SELECT ` + fileTriggerColumns + ` FROM stepwise_file_trigger ORDER BY name`
	fileTriggerDeleteSQL = `DELETE FROM stepwise_file_trigger WHERE name = $1`
	fileArrivalDeleteSQL = `DELETE FROM stepwise_file_arrival WHERE trigger_name = $1`
	fileArrivalColumns   = `trigger_name, file_key, execution_arn, started_at`
	fileArrivalInsertSQL = `INSERT INTO stepwise_file_arrival (` + fileArrivalColumns + `) VALUES ($1, $2, $3, $4)
		ON CONFLICT (trigger_name, file_key) DO NOTHING`
	fileArrivalGetSQL  = `SELECT ` + fileArrivalColumns + ` FROM stepwise_file_arrival WHERE trigger_name = $1 AND file_key = $2`
	fileArrivalListSQL = `SELECT ` + fileArrivalColumns + ` FROM stepwise_file_arrival WHERE trigger_name = $1 ORDER BY started_at DESC, file_key LIMIT $2`
)

var _ store.FileTriggerStore = (*Core)(nil)

func scanFileTrigger(s Scanner) (*store.FileTrigger, error) {
	var x store.FileTrigger
	var created, updated int64
	if err := s.Scan(&x.Name, &x.Body, &created, &updated); err != nil {
		return nil, err
	}
	x.CreatedAt, x.UpdatedAt = FromMillis(created), FromMillis(updated)
	return &x, nil
}

func scanFileArrival(s Scanner) (*store.FileArrival, error) {
	var x store.FileArrival
	var started int64
	if err := s.Scan(&x.Trigger, &x.Key, &x.ExecutionArn, &started); err != nil {
		return nil, err
	}
	x.StartedAt = FromMillis(started)
	return &x, nil
}

// FileTriggerPut inserts a trigger, or replaces the body and update date
// of the one of its name.
func (c *Core) FileTriggerPut(ctx context.Context, t *store.FileTrigger) error {
	_, err := c.conn.Writer().Exec(ctx, fileTriggerPutSQL, t.Name, t.Body, Millis(t.CreatedAt), Millis(t.UpdatedAt))
	return c.conn.Error("put file trigger "+t.Name, err)
}

// FileTriggerGet returns a trigger.
func (c *Core) FileTriggerGet(ctx context.Context, name string) (*store.FileTrigger, error) {
	t, err := scanFileTrigger(c.conn.Reader().QueryRow(ctx, fileTriggerGetSQL, name))
	if err != nil {
		return nil, c.conn.Error("get file trigger "+name, err)
	}
	return t, nil
}

// FileTriggerList returns every trigger by name.
func (c *Core) FileTriggerList(ctx context.Context) ([]*store.FileTrigger, error) {
	ts, err := QueryAll(ctx, c.conn.Reader(), fileTriggerListSQL, nil, scanFileTrigger)
	if err != nil {
		return nil, c.conn.Error("list file triggers", err)
	}
	return ts, nil
}

// FileTriggerDelete deletes a trigger and its arrivals.
func (c *Core) FileTriggerDelete(ctx context.Context, name string) error {
	// The trigger first: a stop between the two leaves arrivals of no
	// trigger, never a trigger whose files would start again.
	w := c.conn.Writer()
	n, err := w.Exec(ctx, fileTriggerDeleteSQL, name)
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	if err == nil {
		_, err = w.Exec(ctx, fileArrivalDeleteSQL, name)
	}
	return c.conn.Error("delete file trigger "+name, err)
}

// FileArrivalInsert records an arrival (ON CONFLICT DO NOTHING, so that a
// transaction goes on after a clash).
func (c *Core) FileArrivalInsert(ctx context.Context, a *store.FileArrival) error {
	n, err := c.conn.Writer().Exec(ctx, fileArrivalInsertSQL, a.Trigger, a.Key, a.ExecutionArn, Millis(a.StartedAt))
	if err == nil && n == 0 {
		err = store.ErrAlreadyExists
	}
	return c.conn.Error("record file arrival "+a.Key, err)
}

// FileArrivalGet returns an arrival.
func (c *Core) FileArrivalGet(ctx context.Context, trigger, key string) (*store.FileArrival, error) {
	a, err := scanFileArrival(c.conn.Reader().QueryRow(ctx, fileArrivalGetSQL, trigger, key))
	if err != nil {
		return nil, c.conn.Error("get file arrival "+key, err)
	}
	return a, nil
}

// FileArrivalList returns a trigger's latest arrivals.
func (c *Core) FileArrivalList(ctx context.Context, trigger string, limit int) ([]*store.FileArrival, error) {
	as, err := QueryAll(ctx, c.conn.Reader(), fileArrivalListSQL, []any{trigger, limit}, scanFileArrival)
	if err != nil {
		return nil, c.conn.Error("list file arrivals of "+trigger, err)
	}
	return as, nil
}
