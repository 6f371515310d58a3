package sqlcore

import (
	"context"

	"stepwise/store"
)

// A put of a stack that exists keeps its created_at: ON CONFLICT ... DO
// UPDATE is in both (SQLite since 3.24).
const (
	stackColumns = `name, body, created_at, updated_at`
	stackPutSQL  = `INSERT INTO stepwise_stack (` + stackColumns + `) VALUES ($1, $2, $3, $4)
		ON CONFLICT (name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at`
	stackGetSQL    = `SELECT ` + stackColumns + ` FROM stepwise_stack WHERE name = $1`
	stackListSQL   = `SELECT ` + stackColumns + ` FROM stepwise_stack ORDER BY name`
	stackDeleteSQL = `DELETE FROM stepwise_stack WHERE name = $1`
)

var _ store.StackStore = (*Core)(nil)

func scanStack(s Scanner) (*store.Stack, error) {
	var x store.Stack
	var created, updated int64
	if err := s.Scan(&x.Name, &x.Body, &created, &updated); err != nil {
		return nil, err
	}
	x.CreatedAt, x.UpdatedAt = FromMillis(created), FromMillis(updated)
	return &x, nil
}

// StackPut inserts a stack, or replaces the body and update date of the
// one of its name.
func (c *Core) StackPut(ctx context.Context, s *store.Stack) error {
	_, err := c.conn.Writer().Exec(ctx, stackPutSQL, s.Name, s.Body, Millis(s.CreatedAt), Millis(s.UpdatedAt))
	return c.conn.Error("put stack "+s.Name, err)
}

// StackGet returns a stack.
func (c *Core) StackGet(ctx context.Context, name string) (*store.Stack, error) {
	s, err := scanStack(c.conn.Reader().QueryRow(ctx, stackGetSQL, name))
	if err != nil {
		return nil, c.conn.Error("get stack "+name, err)
	}
	return s, nil
}

// StackList returns every stack by name.
func (c *Core) StackList(ctx context.Context) ([]*store.Stack, error) {
	ss, err := QueryAll(ctx, c.conn.Reader(), stackListSQL, nil, scanStack)
	if err != nil {
		return nil, c.conn.Error("list stacks", err)
	}
	return ss, nil
}

// StackDelete deletes a stack.
func (c *Core) StackDelete(ctx context.Context, name string) error {
	n, err := c.conn.Writer().Exec(ctx, stackDeleteSQL, name)
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	return c.conn.Error("delete stack "+name, err)
}
