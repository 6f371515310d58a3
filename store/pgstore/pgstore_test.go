package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"stepwise/history"
	"stepwise/internal/testkit/pgtest"
	"stepwise/store"
	"stepwise/store/migrate"
	"stepwise/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Wrap(m)) }

// open opens a driver on a new database, closed when t ends.
func open(ctx context.Context, t *testing.T, opts Options) *Driver {
	t.Helper()
	d, err := Open(ctx, pgtest.NewDatabase(t), opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return d
}

func TestDriver(t *testing.T) {
	t.Parallel()

	ctx := context.Background()
	storetest.Exercise(ctx, t, func(t *testing.T) store.Driver {
		d, err := Open(ctx, pgtest.NewDatabase(t), Options{})
		require.NoError(t, err)
		return d
	})
}

var baseTime = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// seed writes a state machine and a running execution with two events.
func seed(ctx context.Context, t testing.TB, ex store.Executor) *store.Execution {
	t.Helper()
	sm, err := ex.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: &store.StateMachine{
		Arn: "arn:aws:states:us-east-1:123456789012:stateMachine:sm", Name: "sm", Type: "STANDARD", Status: "ACTIVE",
		RevisionID: "r1", Definition: `{}`, RoleArn: "role", CreatedAt: baseTime, UpdatedAt: baseTime,
	}})
	require.NoError(t, err)
	x, err := ex.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: &store.Execution{
		Arn: "arn:aws:states:us-east-1:123456789012:execution:sm:x", StateMachineArn: sm.Arn, RevisionID: "r1",
		Name: "x", Status: history.StatusRunning, Input: `{}`, StartDate: baseTime, RoleArn: "role", Version: 1, LastEventID: 2,
	}})
	require.NoError(t, err)
	require.NoError(t, ex.EventInsert(ctx, []*store.Event{
		{ExecutionArn: x.Arn, ID: 1, Type: history.EventExecutionStarted, Timestamp: baseTime, Body: []byte(`{"id":1}`)},
		{ExecutionArn: x.Arn, ID: 2, Type: "PassStateEntered", Timestamp: baseTime, Body: []byte(`{"id":2}`)},
	}))
	return x
}

// applied returns the migrations recorded in d's database.
func applied(ctx context.Context, t *testing.T, d *Driver) []int {
	t.Helper()
	m, err := Migrator()
	require.NoError(t, err)
	db := stdlib.OpenDBFromPool(d.pool)
	defer db.Close()
	versions, err := m.Applied(ctx, db)
	require.NoError(t, err)
	return versions
}

// unusedPort is a local TCP port nothing listens on.
func unusedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

func TestOpen(t *testing.T) {
	t.Parallel()

	ctx := context.Background()

	t.Run("Migrated", func(t *testing.T) {
		t.Parallel()

		d := open(ctx, t, Options{})
		require.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, applied(ctx, t, d))
		seed(ctx, t, d.Executor())
	})

	t.Run("ReopenKeepsData", func(t *testing.T) {
		t.Parallel()

		url := pgtest.NewDatabase(t)
		d, err := Open(ctx, url, Options{})
		require.NoError(t, err)
		x := seed(ctx, t, d.Executor())
		require.NoError(t, d.Close())
		require.NoError(t, d.Close()) // idempotent

		d, err = Open(ctx, url, Options{})
		require.NoError(t, err)
		defer d.Close()
		got, err := d.Executor().ExecutionGet(ctx, x.Arn)
		require.NoError(t, err)
		require.Equal(t, x, got)
		require.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, applied(ctx, t, d))
	})

	t.Run("ConcurrentOpens", func(t *testing.T) {
		t.Parallel()

		// Servers starting together on a new database: the advisory lock
		// has them migrate in turn, and each finds the schema complete.
		url := pgtest.NewDatabase(t)
		const n = 5
		drivers := make(chan *Driver, n)
		errs := make(chan error, n)
		for range n {
			go func() {
				d, err := Open(ctx, url, Options{MaxConns: 2})
				if err != nil {
					errs <- err
					return
				}
				drivers <- d
			}()
		}
		for range n {
			select {
			case err := <-errs:
				require.NoError(t, err)
			case d := <-drivers:
				require.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, applied(ctx, t, d))
				require.NoError(t, d.Close())
			}
		}
	})

	t.Run("PoolOptions", func(t *testing.T) {
		t.Parallel()

		url := pgtest.NewDatabase(t)
		d, err := Open(ctx, url, Options{MaxConns: 3, MinConns: 1})
		require.NoError(t, err)
		defer d.Close()
		require.Equal(t, int32(3), d.Pool().Config().MaxConns)
		require.Equal(t, int32(1), d.Pool().Config().MinConns)

		d2, err := Open(ctx, url+"&pool_max_conns=7", Options{})
		require.NoError(t, err)
		defer d2.Close()
		require.Equal(t, int32(7), d2.Pool().Config().MaxConns, "the URL's setting stands when Options leaves it")

		_, err = Open(ctx, url, Options{MaxConns: 2, MinConns: 3})
		require.ErrorContains(t, err, "MinConns 3 is above MaxConns 2")
	})

	t.Run("BadURL", func(t *testing.T) {
		t.Parallel()

		_, err := Open(ctx, "postgres://postgres:secretpw@localhost:notaport/db", Options{})
		require.ErrorContains(t, err, "parse PostgreSQL URL")
		require.NotContains(t, err.Error(), "secretpw")
		require.NotErrorIs(t, err, store.ErrUnavailable)
	})

	t.Run("Unreachable", func(t *testing.T) {
		t.Parallel()

		port := unusedPort(t)
		_, err := Open(ctx, fmt.Sprintf("postgres://stepwise:secretpw@127.0.0.1:%d/stepwise?sslmode=disable&connect_timeout=5", port), Options{})
		require.ErrorIs(t, err, store.ErrUnavailable)
		require.ErrorContains(t, err, fmt.Sprintf("connect to PostgreSQL at 127.0.0.1:%d/stepwise", port))
		require.ErrorContains(t, err, "connection refused")
		require.NotContains(t, err.Error(), "secretpw")
	})

	t.Run("NoSuchDatabase", func(t *testing.T) {
		t.Parallel()

		url := strings.Replace(pgtest.Start(t), "/postgres?", "/stepwise_nope?", 1)
		_, err := Open(ctx, url, Options{})
		require.ErrorContains(t, err, `database "stepwise_nope" does not exist`)
	})

	t.Run("NewerSchema", func(t *testing.T) {
		t.Parallel()

		url := pgtest.NewDatabase(t)
		d, err := Open(ctx, url, Options{})
		require.NoError(t, err)
		_, err = d.pool.Exec(ctx, `INSERT INTO stepwise_migration (version, name, applied_at) VALUES (99, 'future', 0)`)
		require.NoError(t, err)
		require.NoError(t, d.Close())

		_, err = Open(ctx, url, Options{})
		require.ErrorContains(t, err, "database has migration 99, which this build does not know: it was migrated by a newer version")
	})

	t.Run("MigrateDownAndUp", func(t *testing.T) {
		t.Parallel()

		d := open(ctx, t, Options{})
		seed(ctx, t, d.Executor())
		m, err := Migrator()
		require.NoError(t, err)
		db := stdlib.OpenDBFromPool(d.pool)
		defer db.Close()
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		res, err := m.Migrate(ctx, tx, migrate.DirectionDown, &migrate.Opts{TargetVersion: -1})
		require.NoError(t, err)
		require.Equal(t, []int{19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, res.Versions)
		var tables int
		require.NoError(t, tx.QueryRowContext(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename != 'stepwise_migration'`).Scan(&tables))
		require.Zero(t, tables)
		res, err = m.Migrate(ctx, tx, migrate.DirectionUp, nil)
		require.NoError(t, err)
		require.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, res.Versions)
		require.NoError(t, tx.Commit())

		_, err = d.Executor().ExecutionGet(ctx, "arn:aws:states:us-east-1:123456789012:execution:sm:x")
		require.ErrorIs(t, err, store.ErrNotFound)
		seed(ctx, t, d.Executor())
	})

	t.Run("HistoryRowsMigration", func(t *testing.T) {
		t.Parallel()

		d := open(ctx, t, Options{})
		x := seed(ctx, t, d.Executor())
		m, err := Migrator()
		require.NoError(t, err)
		db := stdlib.OpenDBFromPool(d.pool)
		defer db.Close()
		storetest.HistoryRowsMigration(ctx, t, db, m, d.Executor(), x)
	})
}

// Connection settings the URL leaves out come from PG* variables. (Not
// parallel: it sets the environment.)
func TestOpenEnvironment(t *testing.T) {
	ctx := context.Background()
	u, err := url.Parse(pgtest.NewDatabase(t))
	require.NoError(t, err)
	t.Setenv("PGHOST", u.Hostname())
	t.Setenv("PGPORT", u.Port())
	t.Setenv("PGUSER", u.User.Username())
	t.Setenv("PGDATABASE", strings.TrimPrefix(u.Path, "/"))
	t.Setenv("PGSSLMODE", "disable")
	d, err := Open(ctx, "", Options{})
	require.NoError(t, err)
	defer d.Close()
	seed(ctx, t, d.Executor())
}

func TestErrors(t *testing.T) {
	t.Parallel()

	ctx := context.Background()

	t.Run("UnknownExecutionIsNotFound", func(t *testing.T) {
		t.Parallel()

		d := open(ctx, t, Options{})
		err := d.Executor().EventInsert(ctx, []*store.Event{{ExecutionArn: "nope", ID: 1, Type: "X", Timestamp: baseTime, Body: []byte(`{}`)}})
		require.ErrorIs(t, err, store.ErrNotFound)
		err = d.Executor().InputInsert(ctx, []*store.Input{{ExecutionArn: "nope", Seq: 1, At: baseTime, Body: []byte(`{}`)}})
		require.ErrorIs(t, err, store.ErrNotFound)
		err = d.Executor().TimerInsert(ctx, []*store.Timer{{ExecutionArn: "nope", ID: "t", FireAt: baseTime}})
		require.ErrorIs(t, err, store.ErrNotFound)
		err = d.Executor().TaskInsert(ctx, []*store.Task{{ExecutionArn: "nope", ID: "k", Resource: "r", Body: []byte(`{}`), CreatedAt: baseTime}})
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("ConnectionTerminated", func(t *testing.T) {
		t.Parallel()

		d := open(ctx, t, Options{})
		x := seed(ctx, t, d.Executor())
		tx, err := d.Begin(ctx)
		require.NoError(t, err)
		pid := tx.(*ExecutorTx).tx.Conn().PgConn().PID()
		_, err = d.pool.Exec(ctx, "SELECT pg_terminate_backend($1)", pid)
		require.NoError(t, err)
		_, err = tx.ExecutionGet(ctx, x.Arn)
		require.ErrorIs(t, err, store.ErrUnavailable)
		t.Logf("read on a terminated connection: %v", err)
		_, err = tx.ExecutionGet(ctx, x.Arn)
		require.ErrorIs(t, err, store.ErrUnavailable, "and on the closed connection after it")
		_ = tx.Rollback(ctx)

		// The pool replaces the connection.
		got, err := d.Executor().ExecutionGet(ctx, x.Arn)
		require.NoError(t, err)
		require.Equal(t, x, got)
	})

	t.Run("TooManyConnections", func(t *testing.T) {
		t.Parallel()

		// A role allowed no connection (a superuser's limits do not
		// count), as a server whose slots are all taken.
		d := open(ctx, t, Options{})
		role := fmt.Sprintf("stepwise_limited_%d", time.Now().UnixNano())
		_, err := d.pool.Exec(ctx, "CREATE ROLE "+role+" LOGIN CONNECTION LIMIT 0")
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = d.pool.Exec(ctx, "DROP ROLE "+role) })
		u, err := url.Parse(pgtest.NewDatabase(t))
		require.NoError(t, err)
		u.User = url.User(role)
		_, err = Open(ctx, u.String(), Options{})
		require.ErrorIs(t, err, store.ErrUnavailable)
		require.ErrorContains(t, err, "too many connections")
	})
}

// A row written before notices were packed (migration 007) is read as the
// one notice it holds; a damaged packed row is an error, not a guess.
func TestOutboxRows(t *testing.T) {
	t.Parallel()

	ctx := context.Background()
	d := open(ctx, t, Options{})
	_, err := d.pool.Exec(ctx, `INSERT INTO stepwise_outbox (created_at, body) VALUES (1767225600000, '{"old":1}')`)
	require.NoError(t, err)
	got, err := d.Executor().OutboxList(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, `{"old":1}`, string(got[0].Body))
	require.Equal(t, int64(1767225600000), got[0].CreatedAt.UnixMilli())

	_, err = d.pool.Exec(ctx, `INSERT INTO stepwise_outbox (created_at, notices, body) VALUES (1767225600000, 2, '\x0203616263')`)
	require.NoError(t, err)
	_, err = d.Executor().OutboxList(ctx, got[0].ID, 10)
	require.ErrorContains(t, err, "damaged", "two notices announced, one there")
}

// Writers commit notices concurrently, on several drivers as several
// servers would; a reader following them sees IDs one after the other,
// never one whose predecessor commits later.
func TestOutboxIDsInCommitOrder(t *testing.T) {
	t.Parallel()

	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	var drivers []*Driver
	for range 3 {
		d, err := Open(ctx, url, Options{MaxConns: 4})
		require.NoError(t, err)
		defer d.Close()
		drivers = append(drivers, d)
	}
	x := seed(ctx, t, drivers[0].Executor())

	const writers, commits = 6, 40
	var seq atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			d := drivers[w%len(drivers)]
			for range commits {
				s := seq.Add(1)
				tx, err := d.Begin(ctx)
				if err == nil {
					err = tx.StepWrite(ctx, []*store.Step{{
						Input:  &store.Input{ExecutionArn: x.Arn, Seq: s, At: baseTime, Body: []byte(`{}`)},
						Outbox: []*store.OutboxEvent{{CreatedAt: baseTime, Body: []byte(fmt.Sprint(s))}},
					}})
					if err == nil {
						err = tx.Commit(ctx)
					} else {
						_ = tx.Rollback(ctx)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	var last int64
	seen := 0
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		evs, err := drivers[1].Executor().OutboxList(ctx, last, 100)
		require.NoError(t, err)
		for _, ev := range evs {
			if last != 0 {
				require.Equal(t, last+1, ev.ID, "an ID became visible before the one below it")
			}
			last = ev.ID
			seen++
		}
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	evs, err := drivers[1].Executor().OutboxList(ctx, last, 1000)
	require.NoError(t, err)
	require.Empty(t, evs)
	require.Equal(t, writers*commits, seen)
}

// BenchmarkStepWrite writes activity-task-shaped steps through StepWrite,
// 6 executions' steps to a transaction, as sqlitestore's benchmark of the
// same name does.
func BenchmarkStepWrite(b *testing.B) {
	ctx := context.Background()
	d, err := Open(ctx, pgtest.NewDatabase(b), Options{})
	require.NoError(b, err)
	defer d.Close()

	const batch, executions = 6, 64
	ex := d.Executor()
	const smArn = "arn:aws:states:us-east-1:123456789012:stateMachine:bench"
	_, err = ex.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: &store.StateMachine{
		Arn: smArn, Name: "bench", Type: "STANDARD", Status: "ACTIVE",
		RevisionID: "r1", Definition: `{}`, RoleArn: "role", CreatedAt: baseTime, UpdatedAt: baseTime,
	}})
	require.NoError(b, err)
	type execution struct {
		arn         string
		lastID, seq int64
	}
	xs := make([]*execution, executions)
	for i := range xs {
		arn := fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:bench:%08d-aaaa-bbbb-cccc-dddddddddddd", i)
		_, err := ex.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: &store.Execution{
			Arn: arn, StateMachineArn: smArn, RevisionID: "r1", Name: arn[len(arn)-36:], Status: history.StatusRunning,
			Input: `{}`, StartDate: baseTime, RoleArn: "role", Version: 1,
		}})
		require.NoError(b, err)
		xs[i] = &execution{arn: arn}
	}
	body := bytes.Repeat([]byte("b"), 150)
	step := func(x *execution, now time.Time) *store.Step {
		events := 1 + 3*int(x.seq%2) // a hand-out, then a completion
		s := &store.Step{Input: &store.Input{ExecutionArn: x.arn, Seq: x.seq + 1, At: now, Body: body[:100]}}
		for j := range events {
			s.Events = append(s.Events, &store.Event{ExecutionArn: x.arn, ID: x.lastID + int64(j) + 1, Type: "TaskStateEntered", Timestamp: now, Body: body})
		}
		x.lastID += int64(events)
		x.seq++
		return s
	}

	b.ReportAllocs()
	b.ResetTimer()
	steps := make([]*store.Step, 0, batch)
	for i := 0; i < b.N; i += batch {
		steps = steps[:0]
		for j := i; j < min(i+batch, b.N); j++ {
			steps = append(steps, step(xs[j%executions], baseTime.Add(time.Duration(j)*time.Millisecond)))
		}
		tx, err := d.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.StepWrite(ctx, steps); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// Writers race to step one execution through StepWrite, each with the
// version it read: an update that waited for another writer's commit
// matches nothing and is a conflict, and no step is lost.
func TestStepWriteConcurrent(t *testing.T) {
	t.Parallel()

	ctx := context.Background()
	d := open(ctx, t, Options{MaxConns: 8})
	x := seed(ctx, t, d.Executor())

	const workers, steps = 4, 15
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for done := 0; done < steps; {
				cur, err := d.Executor().ExecutionGet(ctx, x.Arn)
				if err == nil {
					err = d.Executor().StepWrite(ctx, []*store.Step{{
						Update: &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: cur.Version, Status: history.StatusRunning, LastEventID: cur.LastEventID + 1},
						Events: []*store.Event{{ExecutionArn: x.Arn, ID: cur.LastEventID + 1, Type: "PassStateEntered", Timestamp: baseTime, Body: []byte(`{}`)}},
					}})
				}
				switch {
				case err == nil:
					done++
				case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrAlreadyExists):
					conflicts.Add(1)
				default:
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err := d.Executor().ExecutionGet(ctx, x.Arn)
	require.NoError(t, err)
	require.Equal(t, int64(1+workers*steps), got.Version)
	evs, err := d.Executor().EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
	require.NoError(t, err)
	require.Len(t, evs, 2+workers*steps)
	t.Logf("%d conflicts", conflicts.Load())
}

func TestSessionSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	first, err := Open(ctx, url, Options{})
	require.NoError(t, err)
	_, err = first.pool.Exec(ctx, `ALTER DATABASE `+pgx.Identifier{first.pool.Config().ConnConfig.Database}.Sanitize()+` SET default_transaction_isolation = 'serializable'`)
	require.NoError(t, err)
	first.Close()
	d, err := Open(ctx, url, Options{}) // sessions begun after the change
	require.NoError(t, err)
	defer d.Close()
	var iso, idle string
	require.NoError(t, d.pool.QueryRow(ctx, `SELECT current_setting('transaction_isolation'), current_setting('idle_in_transaction_session_timeout')`).Scan(&iso, &idle))
	require.Equal(t, "read committed", iso)
	require.Equal(t, "30s", idle)

	_, err = d.Executor().MetaGetOrPut(ctx, "key\x00", []byte("v"))
	if err == nil {
		_, err = d.pool.Exec(ctx, `SELECT $1::text`, "a\x00b")
	}
	require.ErrorContains(t, interpretError("write", err), "cannot hold a NUL character")
}

// WriteSteps writes steps all or none in a transaction of its own: a
// batch with a conflicting step writes nothing; the batch without it is
// written.
func TestWriteSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := open(ctx, t, Options{})
	x := seed(ctx, t, d.Executor())
	step := func(version int64) *store.Step {
		return &store.Step{
			Update: &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: version, Status: history.StatusRunning, LastEventID: x.LastEventID + 1},
			Events: []*store.Event{{ExecutionArn: x.Arn, ID: x.LastEventID + 1, Type: "PassStateEntered", Timestamp: baseTime, Body: []byte(`{}`)}},
		}
	}
	require.ErrorIs(t, d.WriteSteps(ctx, []*store.Step{step(x.Version + 5)}), store.ErrConflict)
	got, err := d.Executor().ExecutionGet(ctx, x.Arn)
	require.NoError(t, err)
	require.Equal(t, x.Version, got.Version)
	evs, err := d.Executor().EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
	require.NoError(t, err)
	require.Len(t, evs, int(x.LastEventID))

	require.NoError(t, d.WriteSteps(ctx, []*store.Step{step(x.Version)}))
	got, err = d.Executor().ExecutionGet(ctx, x.Arn)
	require.NoError(t, err)
	require.Equal(t, x.Version+1, got.Version)
	evs, err = d.Executor().EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
	require.NoError(t, err)
	require.Len(t, evs, int(x.LastEventID)+1)
}

// StepWrite tells a step that leaves its row as it was, or updates it,
// the id of its execution's row, and writes a step that carries one
// under that row without looking the ARN up.
func TestStepWriteCarriesExecutionID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ex := open(ctx, t, Options{}).Executor()
	x := seed(ctx, t, ex)
	y := *x
	y.Arn, y.Name, y.LastEventID = x.Arn+"2", "x2", 0

	event := func(arn string, id int64) []*store.Event {
		return []*store.Event{{ExecutionArn: arn, ID: id, Type: "PassStateEntered", Timestamp: baseTime, Body: []byte(`{}`)}}
	}
	input := func(arn string, seq int64) *store.Input {
		return &store.Input{ExecutionArn: arn, Seq: seq, At: baseTime, Body: []byte(`{}`)}
	}
	require.NoError(t, ex.StepWrite(ctx, []*store.Step{{Insert: &y, Events: event(y.Arn, 1)}}))
	looked := &store.Step{Input: input(y.Arn, 1), Events: event(y.Arn, 2)}
	updated := &store.Step{Update: &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: x.Version, Status: history.StatusRunning, LastEventID: 3},
		Input: input(x.Arn, 1), Events: event(x.Arn, 3)}
	require.NoError(t, ex.StepWrite(ctx, []*store.Step{looked, updated}))
	require.NotZero(t, looked.ExecutionID)
	require.NotZero(t, updated.ExecutionID)
	require.NotEqual(t, looked.ExecutionID, updated.ExecutionID)

	// A step naming x's ARN but carrying y's row id is written to y.
	carried := &store.Step{Input: input(x.Arn, 2), Events: event(x.Arn, 3), ExecutionID: looked.ExecutionID}
	require.NoError(t, ex.StepWrite(ctx, []*store.Step{carried}))
	evs, err := ex.EventList(ctx, &store.EventListParams{ExecutionArn: y.Arn})
	require.NoError(t, err)
	require.Len(t, evs, 3)
	evs, err = ex.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
	require.NoError(t, err)
	require.Len(t, evs, 3)
}
