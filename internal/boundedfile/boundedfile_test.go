package boundedfile_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/internal/boundedfile"
)

func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	require.NoError(t, os.WriteFile(small, []byte(`{"a":1}`), 0o600))
	got, err := boundedfile.Read(context.Background(), small, 7)
	require.NoError(t, err)
	require.Equal(t, `{"a":1}`, string(got))

	// One byte over the limit is refused, naming the file and the limit.
	_, err = boundedfile.Read(context.Background(), small, 6)
	var tl *boundedfile.TooLargeError
	require.ErrorAs(t, err, &tl)
	require.EqualError(t, err, small+" is larger than 6 bytes, the most read of such a file")

	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("x", 3<<20)), 0o600))
	_, err = boundedfile.Read(context.Background(), big, 1<<20)
	require.EqualError(t, err, big+" is larger than 1 MiB, the most read of such a file")
	got, err = boundedfile.Read(context.Background(), big, 3<<20)
	require.NoError(t, err)
	require.Len(t, got, 3<<20)

	_, err = boundedfile.Read(context.Background(), filepath.Join(dir, "none"), 10)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := boundedfile.Read(context.Background(), "/dev/zero", 1<<20)
	require.ErrorIs(t, err, boundedfile.ErrNotRegular)
	require.EqualError(t, err, "/dev/zero is not a regular file (a device)")

	_, err = boundedfile.Read(context.Background(), dir, 1<<20)
	require.EqualError(t, err, dir+" is not a regular file (a directory)")

	// A FIFO with no writer: refused at once, not a read that hangs.
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	done := make(chan error, 1)
	go func() {
		_, err := boundedfile.Read(context.Background(), fifo, 1<<20)
		done <- err
	}()
	select {
	case err := <-done:
		require.True(t, errors.Is(err, boundedfile.ErrNotRegular), "%v", err)
		require.EqualError(t, err, fifo+" is not a regular file (a named pipe)")
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}

	// A link to a regular file is read.
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("ok"), 0o600))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(target, link))
	got, err := boundedfile.Read(context.Background(), link, 10)
	require.NoError(t, err)
	require.Equal(t, "ok", string(got))
}

func TestReadStopsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := boundedfile.ReadFrom(ctx, strings.NewReader(strings.Repeat("x", 1<<20)), "endless", 2<<20)
	require.ErrorIs(t, err, context.Canceled)
}

func TestSize(t *testing.T) {
	t.Parallel()
	require.Equal(t, "256 KiB", boundedfile.Size(256<<10))
	require.Equal(t, "6 MiB", boundedfile.Size(6<<20))
	require.Equal(t, "2 GiB", boundedfile.Size(2<<30))
	require.Equal(t, "1000 bytes", boundedfile.Size(1000))
}
