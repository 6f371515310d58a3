package execlog

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
)

// Event is one log event: a record and the time CloudWatch Logs files it
// under (the history event's).
type Event struct {
	Time    time.Time
	Message []byte
}

// Destination is a log stream of a log group.
type Destination struct {
	Group  string
	Stream string
	// Region is the log group's region (from its ARN).
	Region string
}

// Sink writes log events. The Writer calls it from one goroutine.
type Sink interface {
	// Put writes events, oldest first, to a stream, creating the stream
	// when it is missing. rejected counts events the destination refused
	// one by one (too large, too old) while it took the others; an error
	// means none was written.
	Put(ctx context.Context, d Destination, events []Event) (rejected int, err error)
	// Close releases the sink.
	Close() error
}

// FileSink writes log events as JSON lines, one record a line, under Dir:
// a folder per log group named after the group, a file per stream named
// after the stream (each with every character other than a letter, a
// digit, '.', '-' and '_' made '_', and ".jsonl" added). Files are
// created with mode 0600: records may hold executions' data.
type FileSink struct {
	Dir string
	// Logger is told of each log group's folder once, when first written.
	Logger *slog.Logger

	seen map[string]bool
}

var _ Sink = (*FileSink)(nil)

// Put appends the events to the stream's file.
func (f *FileSink) Put(_ context.Context, d Destination, events []Event) (int, error) {
	dir := filepath.Join(f.Dir, FileName(d.Group))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("execution logs: %w", err)
	}
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	if !f.seen[dir] {
		f.seen[dir] = true
		if f.Logger != nil {
			f.Logger.Info("execlog: writing a log group's executions' logs to files", "log_group", d.Group, "dir", dir)
		}
	}
	size := 0
	for _, e := range events {
		size += len(e.Message) + 1
	}
	buf := make([]byte, 0, size)
	for _, e := range events {
		buf = append(buf, e.Message...)
		buf = append(buf, '\n')
	}
	file, err := os.OpenFile(filepath.Join(dir, FileName(d.Stream)+".jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 0, fmt.Errorf("execution logs: %w", err)
	}
	_, err = file.Write(buf)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("execution logs: %w", err)
	}
	return 0, nil
}

// Close does nothing: files are closed after each write.
func (f *FileSink) Close() error { return nil }

// FileName makes a log group's or stream's name a file name: letters,
// digits, '.', '-' and '_' stay, leading slashes go, anything else becomes
// '_' ("/aws/vendedlogs/states/x" → "aws_vendedlogs_states_x").
func FileName(name string) string {
	name = strings.TrimLeft(name, "/")
	out := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
	if out == "" || strings.Trim(out, ".") == "" {
		return "_" + out
	}
	return out
}
