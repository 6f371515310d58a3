package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
)

func exerciseSteps(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	task := func(arn, id string) *store.Task {
		return &store.Task{ExecutionArn: arn, ID: id, Resource: "arn:aws:states:us-east-1:123456789012:activity:work", Body: []byte(`{"id":"` + id + `"}`), CreatedAt: baseTime}
	}
	timer := func(arn, id string) *store.Timer {
		return &store.Timer{ExecutionArn: arn, ID: id, FireAt: baseTime.Add(time.Minute)}
	}
	input := func(arn string, seq int64) *store.Input {
		return &store.Input{ExecutionArn: arn, Seq: seq, At: baseTime, Body: []byte(fmt.Sprintf(`{"seq":%d}`, seq))}
	}
	update := func(x *store.Execution, lastEventID int64) *store.ExecutionUpdateParams {
		return &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: x.Version, Status: history.StatusRunning, LastEventID: lastEventID}
	}

	t.Run("StepWrite", func(t *testing.T) {
		t.Parallel()

		t.Run("WritesEveryPart", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.TaskInsert(ctx, []*store.Task{task(x.Arn, "a"), task(x.Arn, "keep")}))
			require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{timer(x.Arn, "w"), timer(x.Arn, "keep")}))
			y := executionFixture(x.StateMachineArn, "x2", baseTime, history.StatusRunning)
			z := b.insertExecution(ctx, t, x.StateMachineArn, "x3", baseTime, history.StatusRunning)

			stop := baseTime.Add(time.Second)
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{
				{
					Update: update(x, 4), Input: input(x.Arn, 1), Events: eventFixtures(x.Arn, 1, 4),
					DeleteTasks: []string{"a", "never"}, AddTasks: []*store.Task{task(x.Arn, "b")},
					DeleteTimers: []string{"w"}, AddTimers: []*store.Timer{timer(x.Arn, "v")},
				},
				{Insert: y, Events: eventFixtures(y.Arn, 1, 2), AddTasks: []*store.Task{task(y.Arn, "a")}},
				{
					Update: &store.ExecutionUpdateParams{Arn: z.Arn, ExpectedVersion: z.Version, Status: history.StatusSucceeded,
						Output: ptr(`{"ok":true}`), StopDate: &stop, LastEventID: 3},
					Input: input(z.Arn, 1), Events: eventFixtures(z.Arn, 3, 3),
				},
			}))
			require.NoError(t, b.exec.StepWrite(ctx, nil))

			got, err := b.exec.ExecutionGet(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, x.Version+1, got.Version)
			require.Equal(t, int64(4), got.LastEventID)
			got, err = b.exec.ExecutionGet(ctx, y.Arn)
			require.NoError(t, err)
			require.Equal(t, y, got)
			got, err = b.exec.ExecutionGet(ctx, z.Arn)
			require.NoError(t, err)
			require.Equal(t, history.StatusSucceeded, got.Status)
			require.Equal(t, `{"ok":true}`, *got.Output)
			require.Equal(t, stop, *got.StopDate)

			evs, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
			require.NoError(t, err)
			require.Equal(t, eventFixtures(x.Arn, 1, 4), evs)
			evs, err = b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: y.Arn})
			require.NoError(t, err)
			require.Equal(t, eventFixtures(y.Arn, 1, 2), evs)
			evs, err = b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: z.Arn})
			require.NoError(t, err)
			require.Equal(t, eventFixtures(z.Arn, 3, 3), evs)

			ins, err := b.exec.InputList(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Input{input(x.Arn, 1)}, ins)
			ins, err = b.exec.InputList(ctx, y.Arn)
			require.NoError(t, err)
			require.Empty(t, ins)

			tasks, err := b.exec.TaskListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Task{task(x.Arn, "b"), task(x.Arn, "keep")}, tasks)
			tasks, err = b.exec.TaskListForExecution(ctx, y.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Task{task(y.Arn, "a")}, tasks)
			timers, err := b.exec.TimerListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []string{"x1/keep", "x1/v"}, timerKeys(timers))
		})

		t.Run("ManySteps", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			// More rows of each kind than one statement of the driver
			// may carry, in steps of many executions.
			sm := b.insertStateMachine(ctx, t, "sm")
			var steps []*store.Step
			var xs []*store.Execution
			for i := range 150 {
				x := executionFixture(sm.Arn, fmt.Sprintf("x%03d", i), baseTime, history.StatusRunning)
				xs = append(xs, x)
				steps = append(steps, &store.Step{Insert: x, Events: eventFixtures(x.Arn, 1, 2),
					AddTasks: []*store.Task{task(x.Arn, "a"), task(x.Arn, "b")}, AddTimers: []*store.Timer{timer(x.Arn, "w")}})
			}
			require.NoError(t, b.exec.StepWrite(ctx, steps))
			for _, x := range xs {
				got, err := b.exec.ExecutionGet(ctx, x.Arn)
				require.NoError(t, err)
				require.Equal(t, x, got)
			}
			// A batch that inserts a row that exists writes none of its
			// rows.
			fresh := executionFixture(sm.Arn, "fresh", baseTime, history.StatusRunning)
			err := b.exec.StepWrite(ctx, []*store.Step{
				{Insert: fresh, Events: eventFixtures(fresh.Arn, 1, 2)},
				{Insert: executionFixture(sm.Arn, "x007", baseTime, history.StatusRunning), Events: eventFixtures(xs[7].Arn, 3, 4)},
			})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if b.afterError() {
				_, err = b.exec.ExecutionGet(ctx, fresh.Arn)
				require.ErrorIs(t, err, store.ErrNotFound)
			}
			steps = steps[:0]
			for _, x := range xs {
				steps = append(steps, &store.Step{Update: update(x, 3), Input: input(x.Arn, 1), Events: eventFixtures(x.Arn, 3, 3),
					DeleteTasks: []string{"a", "b"}, DeleteTimers: []string{"w"}})
			}
			require.NoError(t, b.exec.StepWrite(ctx, steps))

			for _, x := range xs {
				evs, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
				require.NoError(t, err)
				require.Equal(t, eventFixtures(x.Arn, 1, 3), evs)
				ins, err := b.exec.InputList(ctx, x.Arn)
				require.NoError(t, err)
				require.Equal(t, []*store.Input{input(x.Arn, 1)}, ins)
				tasks, err := b.exec.TaskListForExecution(ctx, x.Arn)
				require.NoError(t, err)
				require.Empty(t, tasks)
				timers, err := b.exec.TimerListForExecution(ctx, x.Arn)
				require.NoError(t, err)
				require.Empty(t, timers)
			}
		})

		t.Run("RowUnchanged", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			// Steps with neither Insert nor Update append to the history
			// and replay log of their Input's execution, next to steps
			// that do write rows, and leave the row as it was.
			x := b.newExecution(ctx, t, "x1")
			y := b.insertExecution(ctx, t, x.StateMachineArn, "x2", baseTime, history.StatusRunning)
			z := executionFixture(x.StateMachineArn, "x3", baseTime, history.StatusRunning)
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{
				{Input: input(x.Arn, 1), Events: eventFixtures(x.Arn, 1, 3), AddTimers: []*store.Timer{timer(x.Arn, "w")}},
				{Insert: z, Events: eventFixtures(z.Arn, 1, 2)},
				{Input: input(y.Arn, 1), Events: eventFixtures(y.Arn, 1, 1)},
			}))
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{{Input: input(x.Arn, 2), Events: eventFixtures(x.Arn, 4, 4), DeleteTimers: []string{"w"}}}))
			got, err := b.exec.ExecutionGet(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, x, got)
			evs, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
			require.NoError(t, err)
			require.Equal(t, eventFixtures(x.Arn, 1, 4), evs)
			ins, err := b.exec.InputList(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Input{input(x.Arn, 1), input(x.Arn, 2)}, ins)
			timers, err := b.exec.TimerListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Empty(t, timers)
			evs, err = b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: y.Arn})
			require.NoError(t, err)
			require.Equal(t, eventFixtures(y.Arn, 1, 1), evs)

			// A second writer of the same step loses on the input's seq,
			// and nothing of its batch is written.
			err = b.exec.StepWrite(ctx, []*store.Step{
				{Input: input(y.Arn, 2), Events: eventFixtures(y.Arn, 2, 2)},
				{Input: input(x.Arn, 2), Events: eventFixtures(x.Arn, 5, 5)},
			})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if b.afterError() {
				evs, err = b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: y.Arn})
				require.NoError(t, err)
				require.Equal(t, eventFixtures(y.Arn, 1, 1), evs)
			}

			missing := executionArn(x.StateMachineArn, "nope")
			err = b.exec.StepWrite(ctx, []*store.Step{{Input: input(missing, 1), Events: eventFixtures(missing, 1, 1)}})
			require.ErrorIs(t, err, store.ErrNotFound)
			err = b.exec.StepWrite(ctx, []*store.Step{{Events: eventFixtures(x.Arn, 5, 5)}})
			require.Error(t, err)
		})

		t.Run("StaleVersion", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			y := b.insertExecution(ctx, t, x.StateMachineArn, "x2", baseTime, history.StatusRunning)
			stale := update(y, 3)
			stale.ExpectedVersion = y.Version + 1
			err := b.exec.StepWrite(ctx, []*store.Step{
				{Update: update(x, 3), Events: eventFixtures(x.Arn, 3, 3)},
				{Update: stale, Events: eventFixtures(y.Arn, 3, 3)},
			})
			require.ErrorIs(t, err, store.ErrConflict)
			if !b.afterError() {
				return
			}
			// All or none.
			got, err := b.exec.ExecutionGet(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, x.Version, got.Version)
			evs, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
			require.NoError(t, err)
			require.Empty(t, evs)
		})

		t.Run("NotFound", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			missing := *x
			missing.Arn = executionArn(x.StateMachineArn, "nope")
			err := b.exec.StepWrite(ctx, []*store.Step{{Update: update(&missing, 3)}})
			require.ErrorIs(t, err, store.ErrNotFound)
		})

		t.Run("EventIDTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.EventInsert(ctx, eventFixtures(x.Arn, 1, 2)))
			err := b.exec.StepWrite(ctx, []*store.Step{{Update: update(x, 3), Input: input(x.Arn, 1), Events: eventFixtures(x.Arn, 2, 3)}})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			got, err := b.exec.ExecutionGet(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, x.Version, got.Version)
			ins, err := b.exec.InputList(ctx, x.Arn)
			require.NoError(t, err)
			require.Empty(t, ins)
		})
	})
}
