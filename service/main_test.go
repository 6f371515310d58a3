package service_test

import (
	"testing"

	"go.uber.org/goleak"

	"stepwise/internal/testkit/pgtest"
)

// TestMain checks that no goroutine is left behind, and stops the
// PostgreSQL cluster the tests started, if any.
func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Wrap(m)) }
