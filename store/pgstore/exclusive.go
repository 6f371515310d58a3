package pgstore

import (
	"context"
	"errors"
	"time"
)

// serverLockKey is the session advisory lock a server holds on its
// database while it runs (Exclusive).
const serverLockKey int64 = 0x7374657077697367

// ErrInUse is Exclusive's answer when another server holds the database.
var ErrInUse = errors.New("another stepwise server is using this database")

// Exclusive takes a session advisory lock that says one server runs on
// the database, on a connection kept out of the pool, and returns what
// gives it back. A second server gets ErrInUse at once. The engine runs
// every execution it finds running as its own, so until executions have
// owners two servers on one database would both run them; the lock keeps
// that from happening. The lock goes with the connection: a server that
// dies releases it.
func (d *Driver) Exclusive(ctx context.Context) (release func(), err error) {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return nil, interpretError("lock the database", err)
	}
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, serverLockKey).Scan(&got); err != nil {
		conn.Release()
		return nil, interpretError("lock the database", err)
	}
	if !got {
		conn.Release()
		return nil, ErrInUse
	}
	// The connection leaves the pool: the pool must neither hand it to
	// anyone else nor close it as idle.
	raw := conn.Hijack()
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		// Unlock first: a closed connection's session ends, and releases
		// the lock, only a little later.
		_, _ = raw.Exec(ctx, `SELECT pg_advisory_unlock($1)`, serverLockKey)
		_ = raw.Close(ctx)
	}, nil
}
