package failure

import (
	"errors"
	"fmt"
	"testing"
)

func TestAsFailure(t *testing.T) {
	t.Parallel()
	fl := New("Custom", "why")
	if got := As(fmt.Errorf("map run: %w", fl)); got != fl {
		t.Fatalf("a wrapped failure is itself: got %v", got)
	}
	got := As(fmt.Errorf("map run: %w", errors.New("disk gone")))
	if got.Name != Runtime || got.Cause != "map run: disk gone" || !got.HasCause {
		t.Fatalf("any other error is States.Runtime with its text: got %+v", got)
	}
}
