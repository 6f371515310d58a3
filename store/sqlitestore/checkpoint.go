package sqlitestore

import (
	"context"
	"database/sql"
	"os"
	"time"
)

// The WAL's checkpoint, which copies the pages the commits appended to
// the WAL into the database file (and fsyncs it), runs on the connection
// that commits when the WAL reaches SQLite's bound (1,000 pages): on the
// goroutine that commits every step, where it took two thirds of a
// commit's time and its fsyncs. A checkpointer does most of that work
// beside it: on a connection and goroutine of its own, woken by the
// commits (at most one checkpoint in flight, at most one every
// checkpointEvery), it runs passive checkpoints, which copy what the WAL
// holds without waiting for (or stopping) the writer or the readers. The
// writer's own checkpoint still runs at the bound, and so the WAL is
// still bounded and starts over as before, but finds the pages copied
// already. Nothing about durability changes: a commit is durable once its
// WAL frames are fsynced, and SQLite recovers a checkpoint cut short by a
// crash from the WAL.
//
// It checkpoints only a WAL of at least checkpointFrom bytes (half the
// writer's bound): a small database's WAL stays as it was, growing into
// new space on the disk until the writer's checkpoint, so that a full
// disk stops its commits as soon as before.
const (
	checkpointEvery = 10 * time.Millisecond
	checkpointFrom  = 2 << 20
)

type checkpointer struct {
	wal     string // the WAL file's path
	db      *sql.DB
	wake    chan struct{}
	done    chan struct{}
	stopped chan struct{}
}

// startCheckpointer starts the checkpointer of the database at path, uri
// (a file: URI followed by "?").
func startCheckpointer(path, uri, busy string) (*checkpointer, error) {
	db, err := sql.Open("sqlite", uri+dsnQuery(false, false, busy))
	if err != nil {
		return nil, err
	}
	keepOneConn(db)
	c := &checkpointer{wal: path + "-wal", db: db, wake: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	go c.run()
	return c, nil
}

// committed wakes the checkpointer after a commit; it does not wait.
func (c *checkpointer) committed() {
	if c == nil {
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.stopped)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-c.wake:
		}
		if fi, err := os.Stat(c.wal); err != nil || fi.Size() < checkpointFrom {
			continue
		}
		// A checkpoint that fails (the disk full, the file busy) is the
		// writer's to do at the bound, as without a checkpointer.
		_, _ = c.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
		t.Reset(checkpointEvery)
		select {
		case <-c.done:
			return
		case <-t.C:
		}
	}
}

// close stops the checkpointer and closes its connection.
func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	close(c.done)
	<-c.stopped
	return c.db.Close()
}
