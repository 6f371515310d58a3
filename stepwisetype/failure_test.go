package stepwisetype

import (
	"errors"
	"fmt"
	"testing"
)

func TestAsFailure(t *testing.T) {
	t.Parallel()
	fl := NewFailure("Custom", "why")
	if got := AsFailure(fmt.Errorf("map run: %w", fl)); got != fl {
		t.Fatalf("a wrapped failure is itself: got %v", got)
	}
	got := AsFailure(fmt.Errorf("map run: %w", errors.New("disk gone")))
	if got.Name != ErrorRuntime || got.Cause != "map run: disk gone" || !got.HasCause {
		t.Fatalf("any other error is States.Runtime with its text: got %+v", got)
	}
}
