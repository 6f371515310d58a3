package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
)

const callbackMachine = `{"StartAt": "Ask", "States": {"Ask": {"Type": "Task",
	"Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
	"Parameters": {"QueueUrl": "q", "MessageBody": {"Token.$": "$$.Task.Token"}}, "End": true}}}`

// callbackTask waits for the single task the runner was given.
func callbackTask(t *testing.T, b *testBundle) *task.Task {
	t.Helper()
	b.tasks.waitPending(t, 1)
	b.tasks.mu.Lock()
	defer b.tasks.mu.Unlock()
	require.Len(t, b.tasks.tasks, 1)
	for _, task := range b.tasks.tasks {
		return task
	}
	return nil
}

// sendAsync calls SendTaskSuccess in the background; its error arrives on
// the channel.
func sendAsync(b *testBundle, token, output string) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- b.engine.SendTaskSuccess(context.Background(), token, output) }()
	return errc
}

// requireHeld checks that a token call has not returned yet.
func requireHeld(t *testing.T, errc <-chan error) {
	t.Helper()
	select {
	case err := <-errc:
		t.Fatalf("the token call went through while the request was being made: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
}

func requireReturns(t *testing.T, errc <-chan error) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the token call is still held")
		return nil
	}
}

// heldCallback starts the callback machine in a fresh engine and calls
// SendTaskSuccess with output before the runner reports the request made:
// the call is held.
type heldCallback struct {
	b    *testBundle
	arn  string // the execution's
	task *task.Task
	errc <-chan error
}

func holdCallback(t *testing.T, output string) *heldCallback {
	t.Helper()
	b := setup(t, 1)
	sm, m := b.machine(t, "callback", callbackMachine)
	row := b.start(t, sm, m, "e1", `{}`)
	task := callbackTask(t, b)
	errc := sendAsync(b, task.Request.Token, output)
	requireHeld(t, errc)
	return &heldCallback{b: b, arn: row.Arn, task: task, errc: errc}
}

// A worker may answer before the request carrying its token is back: the
// answer waits, and the history has TaskSubmitted before TaskSucceeded.
func TestCallbackAnswerWaitsForItsSubmission(t *testing.T) {
	t.Parallel()
	h := holdCallback(t, `"answer"`)
	require.Equal(t, 1, h.b.tasks.complete(task.Result{Submitted: true, Output: "sent"}))
	require.NoError(t, requireReturns(t, h.errc))
	done := h.b.waitStatus(t, h.arn, history.StatusSucceeded)
	require.Equal(t, `"answer"`, *done.Output)
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSubmitted", "TaskSucceeded", "TaskStateExited", "ExecutionSucceeded"},
		h.b.history(t, h.arn))
}

// A runner that makes no request says so, and the token goes through.
func TestCallbackWithoutRequestLetsTheTokenThrough(t *testing.T) {
	t.Parallel()
	h := holdCallback(t, `1`)
	require.Equal(t, 1, h.b.tasks.complete(task.Result{Waiting: true}))
	require.NoError(t, requireReturns(t, h.errc))
	h.b.waitStatus(t, h.arn, history.StatusSucceeded)
	require.NotContains(t, h.b.history(t, h.arn), "TaskSubmitted")
}

// A failed request ends the task: the held answer finds it ended.
func TestCallbackAnswerAfterAFailedRequest(t *testing.T) {
	t.Parallel()
	h := holdCallback(t, `1`)
	h.b.tasks.complete(task.Result{Failure: failure.Newf("SQS.QueueDoesNotExistException", "no queue")})
	require.ErrorIs(t, requireReturns(t, h.errc), ErrTaskOver)
	failed := h.b.waitStatus(t, h.arn, history.StatusFailed)
	require.Equal(t, "SQS.QueueDoesNotExistException", *failed.Error)
}

// Stopping the execution while its request is being made lets the held
// answer through, to find the task ended.
func TestStoppedCallbackReleasesHeldAnswers(t *testing.T) {
	t.Parallel()
	h := holdCallback(t, `1`)
	_, err := h.b.engine.StopExecution(context.Background(), h.arn, "", "")
	require.NoError(t, err)
	require.ErrorIs(t, requireReturns(t, h.errc), ErrTaskOver)
}

// A callback whose request was made is not made again after a restart:
// the token already sent completes it.
func TestSubmittedCallbackIsNotRequestedAgainAfterRestart(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	sm, m := b.machine(t, "restart", callbackMachine)
	row := b.start(t, sm, m, "e1", `{}`)
	tk := callbackTask(t, b)
	key := tk.ExecutionArn + "/" + tk.ID
	b.tasks.complete(task.Result{Submitted: true, Output: "sent"})
	testwait.Until(t, func() bool { return len(b.history(t, row.Arn)) == 5 }, 30*time.Second, 5*time.Millisecond,
		"TaskSubmitted is written")
	b.close()
	b.open(t, 1)
	require.NoError(t, requireReturns(t, sendAsync(b, tk.Request.Token, `"late"`)))
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
	b.tasks.mu.Lock()
	defer b.tasks.mu.Unlock()
	require.Equal(t, 1, b.tasks.runs[key], "the request was made once")
}

// A callback whose request was not recorded as made is made again after
// a restart, and its answers wait for it as before.
func TestUnsubmittedCallbackIsRequestedAgainAfterRestart(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	sm, m := b.machine(t, "again", callbackMachine)
	row := b.start(t, sm, m, "e1", `{}`)
	tk := callbackTask(t, b)
	key := tk.ExecutionArn + "/" + tk.ID
	b.close()
	b.tasks.complete(task.Result{}) // the old engine's runner: no longer heard
	b.open(t, 1)
	b.tasks.waitPending(t, 1)
	errc := sendAsync(b, tk.Request.Token, `"again"`)
	requireHeld(t, errc)
	b.tasks.complete(task.Result{Submitted: true, Output: "sent again"})
	require.NoError(t, requireReturns(t, errc))
	b.waitStatus(t, row.Arn, history.StatusSucceeded)
	b.tasks.mu.Lock()
	defer b.tasks.mu.Unlock()
	require.Equal(t, 2, b.tasks.runs[key])
}

// The request may be what waits for the answer (a function invoked with
// lambda:invoke.waitForTaskToken answering with its own token before it
// returns): held no longer than the gate's bound, the answer goes through
// and ends the task, and the request's late answer is dropped.
func TestCallbackAnswerFromInsideItsRequestGoesThrough(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	b.engine.gates.bound = 300 * time.Millisecond
	sm, m := b.machine(t, "inside", callbackMachine)
	row := b.start(t, sm, m, "e1", `{}`)
	tk := callbackTask(t, b)
	errc := sendAsync(b, tk.Request.Token, `"from inside"`)
	requireHeld(t, errc)
	require.NoError(t, requireReturns(t, errc))
	done := b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Equal(t, `"from inside"`, *done.Output)
	want := []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSucceeded", "TaskStateExited", "ExecutionSucceeded"}
	require.Equal(t, want, b.history(t, row.Arn))

	// The request returns: its answer finds the task ended.
	b.tasks.complete(task.Result{Submitted: true, Output: "sent"})
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, want, b.history(t, row.Arn))
}
