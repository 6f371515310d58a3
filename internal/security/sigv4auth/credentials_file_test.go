package sigv4auth_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/internal/security/sigv4auth"
)

// The credentials file is read only if it is a regular file: a FIFO
// named by --credentials is refused at once, /dev/zero without a read.
func TestLoadCredentialsReadsOnlyARegularFile(t *testing.T) {
	t.Parallel()
	_, err := sigv4auth.LoadCredentials("/dev/zero")
	require.EqualError(t, err, "credentials: /dev/zero is not a regular file (a device)")

	fifo := filepath.Join(t.TempDir(), "credentials")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	done := make(chan error, 1)
	go func() { _, err := sigv4auth.LoadCredentials(fifo); done <- err }()
	select {
	case err := <-done:
		require.EqualError(t, err, "credentials: "+fifo+" is not a regular file (a named pipe)")
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO as the credentials file blocked")
	}
}
