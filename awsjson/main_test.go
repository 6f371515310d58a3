package awsjson_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The SDK's HTTP transport keeps idle connections to test servers; they
// close with the servers, but their reader goroutines may still be
// finishing when the check runs.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}
