package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// serverLockKey is the session advisory lock a server holds on its
// database while it runs (Exclusive).
const serverLockKey int64 = 0x7374657077697367

// exclusiveCheck is how often the lock's session is checked.
const exclusiveCheck = 2 * time.Second

// ErrInUse is Exclusive's answer when another server holds the database.
var ErrInUse = errors.New("another stepwise server is using this database")

// Lock is the database held by one server (Exclusive).
type Lock struct {
	conn     *pgx.Conn
	pid      uint32 // the session's backend
	lost     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// Exclusive takes a session advisory lock that says one server runs on
// the database, on a connection kept out of the pool. A second server
// gets ErrInUse at once. The engine runs every execution it finds running
// as its own, so until executions have owners two servers on one database
// would both run them; the lock keeps that from happening.
//
// The lock lives as long as its session: Lost is closed when the session
// ends (the database restarted, the connection was cut or killed), after
// which another server may take the database, so the holder must stop.
// The session asks the database to probe its connection every few
// seconds (TCP keepalives), so the lock of a server whose host vanished
// is freed within a minute rather than the system's two hours.
func (d *Driver) Exclusive(ctx context.Context) (*Lock, error) {
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
	l := &Lock{conn: conn.Hijack(), lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	if _, err := l.conn.Exec(ctx, `SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 4`); err != nil {
		l.close()
		return nil, interpretError("lock the database", err)
	}
	l.pid = l.conn.PgConn().PID()
	go l.watch()
	return l, nil
}

// Lost is closed when the lock's session ended while it was held.
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// watch checks, now and then, that the session holding the lock lives.
func (l *Lock) watch() {
	defer close(l.done)
	t := time.NewTicker(exclusiveCheck)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), exclusiveCheck)
		err := l.conn.Ping(ctx)
		cancel()
		if err != nil {
			close(l.lost)
			return
		}
	}
}

// Release gives the database back. It is safe to call more than once.
func (l *Lock) Release() {
	l.stopOnce.Do(func() {
		close(l.stop)
		<-l.done // the connection is not for two goroutines at once
		l.close()
	})
}

// close unlocks and closes the lock's connection.
func (l *Lock) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Unlock first: a closed connection's session ends, and releases the
	// lock, only a little later.
	_, _ = l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, serverLockKey)
	_ = l.conn.Close(ctx)
}
