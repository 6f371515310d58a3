package service_test

import (
	"context"
	"errors"
	"testing"

	"stepwise/engine"
	"stepwise/engine/task"
	"stepwise/service"
	"stepwise/sfnapi"
)

// The engine says what went wrong in its own terms; the service answers
// with AWS's codes and words.
func TestEngineErrorsAsAWSErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		err           error
		code, message string
	}{
		{"stopping", task.ErrStopped, sfnapi.CodeServiceUnavailable, "the server is shutting down"},
		{"invalid token", engine.ErrInvalidToken, sfnapi.CodeInvalidToken, "Invalid Token: 'Invalid token'"},
		{"task over", engine.ErrTaskOver, sfnapi.CodeTaskTimedOut, "Task Timed Out: 'Provided task does not exist anymore'"},
		{"invalid output", &engine.InvalidOutputError{Err: errors.New("unexpected end")}, sfnapi.CodeInvalidOutput, "Invalid Output: 'unexpected end'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.engine.SendTaskSuccessFunc = func(ctx context.Context, token, output string) error { return tt.err }
			_, err := b.svc.SendTaskSuccess(b.ctx, &service.SendTaskSuccessInput{TaskToken: "t", Output: "{}"})
			requireAPIError(t, err, tt.code, tt.message)
		})
	}
}
