package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The load generator signs with a key of the server's credentials file
// when the server is given one.
func TestBenchKey(t *testing.T) {
	t.Parallel()
	id, secret, err := benchKey([]string{"--time-skip"})
	require.NoError(t, err)
	require.Equal(t, "bench", id)
	require.Equal(t, "bench", secret)

	path := filepath.Join(t.TempDir(), "credentials")
	require.NoError(t, os.WriteFile(path, []byte("[b]\naws_access_key_id = KB\naws_secret_access_key = sb\n[a]\naws_access_key_id = KA\naws_secret_access_key = sa\n"), 0o600))
	for _, args := range [][]string{{"--credentials", path}, {"--time-skip", "--credentials=" + path}} {
		id, secret, err = benchKey(args)
		require.NoError(t, err)
		require.Equal(t, "KA", id)
		require.Equal(t, "sa", secret)
	}
	_, _, err = benchKey([]string{"--credentials", path + ".missing"})
	require.ErrorContains(t, err, "credentials: open")
}
