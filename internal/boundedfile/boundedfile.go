package boundedfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotRegular is the error of a path that names something other than a
// regular file (after links are followed).
var ErrNotRegular = errors.New("not a regular file")

// TooLargeError is the error of a file larger than the limit it was read
// with.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the most read of such a file", e.Path, Size(e.Limit))
}

// NotRegularError is the error of a path that is not a regular file; it
// is ErrNotRegular.
type NotRegularError struct {
	Path string
	Mode os.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is not a regular file (%s)", e.Path, kind(e.Mode))
}

func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

func kind(m os.FileMode) string {
	switch {
	case m&os.ModeDir != 0:
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	default:
		return "mode " + m.String()
	}
}

// chunk is how much is read between two looks at the context.
const chunk = 64 << 10

// Read reads the regular file at path, at most limit bytes (limit > 0),
// stopping when ctx ends.
func Read(ctx context.Context, path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadFrom(ctx, f, path, limit)
}

// Open opens the regular file at path for reading without blocking on a
// FIFO, and refuses anything but a regular file.
func Open(path string) (*os.File, error) {
	// A FIFO's open blocks until a writer comes unless it is non-blocking;
	// stat first so that a FIFO is not even opened.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	f, err := openNonblocking(path)
	if err != nil {
		return nil, err
	}
	// What was opened may not be what was looked at.
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, nil
}

// ReadFrom reads r (named path in errors) to its end, at most limit
// bytes, stopping when ctx ends.
func ReadFrom(ctx context.Context, r io.Reader, path string, limit int64) ([]byte, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("boundedfile: limit %d for %s", limit, path)
	}
	var buf []byte
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() <= limit {
			buf = make([]byte, 0, fi.Size()+1)
		}
	}
	lr := io.LimitReader(r, limit+1)
	p := make([]byte, chunk)
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		n, err := lr.Read(p)
		buf = append(buf, p[:n]...)
		if int64(len(buf)) > limit {
			return nil, &TooLargeError{Path: path, Limit: limit}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// Size writes n bytes for people: 1 MiB, 256 KiB, 1000 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
