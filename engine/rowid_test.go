package engine

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/store"
	"stepwise/store/sqlitestore"
)

// recordingDriver records, for every step written, its execution's ARN,
// whether it inserts the row, and the row id it carried.
type recordingDriver struct {
	store.Driver
	mu    sync.Mutex
	steps []recordedStep
}

type recordedStep struct {
	arn     string
	insert  bool
	carried int64 // the step's ExecutionID when it was handed to StepWrite
	told    int64 // its ExecutionID after StepWrite
}

func (d *recordingDriver) Begin(ctx context.Context) (store.ExecutorTx, error) {
	tx, err := d.Driver.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingTx{ExecutorTx: tx, d: d}, nil
}

type recordingTx struct {
	store.ExecutorTx
	d *recordingDriver
}

func (tx *recordingTx) StepWrite(ctx context.Context, steps []*store.Step) error {
	carried := make([]int64, len(steps))
	for i, s := range steps {
		carried[i] = s.ExecutionID
	}
	err := tx.ExecutorTx.StepWrite(ctx, steps)
	tx.d.mu.Lock()
	defer tx.d.mu.Unlock()
	for i, s := range steps {
		var arn string
		switch {
		case s.Insert != nil:
			arn = s.Insert.Arn
		case s.Input != nil:
			arn = s.Input.ExecutionArn
		}
		tx.d.steps = append(tx.d.steps, recordedStep{arn: arn, insert: s.Insert != nil, carried: carried[i], told: s.ExecutionID})
	}
	return err
}

func (d *recordingDriver) of(arn string) []recordedStep {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []recordedStep
	for _, s := range d.steps {
		if s.arn == arn {
			out = append(out, s)
		}
	}
	return out
}

// An execution's steps after its first carry the id the store gave its
// row, so the store need not look it up by ARN; after a restart, the
// first step looks it up and the next ones carry it again.
func TestStepsCarryTheExecutionRowID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stepwise.db")
	open := func() (*Engine, *recordingDriver, func()) {
		inner, err := sqlitestore.Open(ctx, path, sqlitestore.Options{})
		require.NoError(t, err)
		drv := &recordingDriver{Driver: inner}
		e, err := New(drv, Config{Region: region, Account: account, WaitTimeScale: 1, Tasks: newFakeTasks(),
			TokenKey: []byte("test key, the same across restarts")})
		require.NoError(t, err)
		require.NoError(t, e.Start(ctx))
		<-e.Resumed()
		var once sync.Once
		stop := func() { once.Do(func() { e.Stop(); inner.Close() }) }
		t.Cleanup(stop)
		return e, drv, stop
	}
	e, drv, stop := open()
	b := &testBundle{path: path, drv: drv.Driver, engine: e}
	createActivity(t, drv.Driver)
	sm, m := b.machine(t, "two", `{"StartAt": "A", "States": {
		"A": {"Type": "Task", "Resource": "`+activityArn+`", "Next": "B"},
		"B": {"Type": "Task", "Resource": "`+activityArn+`", "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	work := func(e *Engine) {
		task, err := e.PollActivity(ctx, activityArn, "w", 10*time.Second)
		require.NoError(t, err)
		require.NotNil(t, task)
		require.NoError(t, e.SendTaskSuccess(ctx, task.Token, `{}`))
	}
	work(e)

	steps := drv.of(row.Arn)
	require.GreaterOrEqual(t, len(steps), 3, "a start, a hand-out, a result")
	require.True(t, steps[0].insert)
	id := steps[0].told
	require.NotZero(t, id)
	for _, s := range steps[1:] {
		require.Equal(t, id, s.carried, "every step after the start carries the row id")
		require.Equal(t, id, s.told)
	}

	stop()
	e2, drv2, _ := open()
	work(e2)
	b.drv, b.engine = drv2.Driver, e2
	b.waitStatus(t, row.Arn, "SUCCEEDED")
	steps = drv2.of(row.Arn)
	require.GreaterOrEqual(t, len(steps), 2)
	require.Zero(t, steps[0].carried, "a resumed execution's first step looks its row up")
	require.Equal(t, id, steps[0].told)
	for _, s := range steps[1:] {
		require.Equal(t, id, s.carried)
	}
}
