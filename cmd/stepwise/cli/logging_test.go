package cli

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/config"
)

// lockedWriter is a bytes.Buffer safe for a logger's goroutines.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func TestNewLogger(t *testing.T) {
	t.Parallel()
	var w lockedWriter
	_, err := newLogger(&w, config.ServerLog{Format: "yaml", Level: "info"})
	require.EqualError(t, err, `log-format "yaml": must be text or json`)
	text, err := newLogger(&w, config.ServerLog{Format: "text", Level: "warn"})
	require.NoError(t, err)
	text.Info("hidden")
	text.Warn("shown", "k", "v")
	require.Equal(t, "level=WARN msg=shown k=v\n", strings.SplitN(w.buf.String(), " ", 2)[1])

	_, _, code := execute("validate", "--log-level", "loud", "x.json")
	require.Equal(t, 2, code)
}
