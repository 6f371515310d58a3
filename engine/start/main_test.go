package start_test

import (
	"testing"

	"stepwise/internal/testkit/pgtest"
)

// TestMain stops the PostgreSQL cluster the tests started, if any.
func TestMain(m *testing.M) { pgtest.Main(m) }
