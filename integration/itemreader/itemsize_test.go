package itemreader

import (
	"compress/gzip"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/interp"
)

// endless is n bytes of c (without end when n < 0), never held.
type endless struct {
	c byte
	n int64
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n == 0 {
		return 0, io.EOF
	}
	if e.n > 0 && int64(len(p)) > e.n {
		p = p[:e.n]
	}
	for i := range p {
		p[i] = e.c
	}
	if e.n > 0 {
		e.n -= int64(len(p))
	}
	return len(p), nil
}

// gzipped is r compressed, as it is read.
func gzipped(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		zw, _ := gzip.NewWriterLevel(pw, gzip.BestSpeed)
		_, err := io.Copy(zw, r)
		if err == nil {
			err = zw.Close()
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// allocated is what f allocates on the heap, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// tooLarge is the line an *ItemTooLargeError names.
func tooLarge(t *testing.T, err error) int64 {
	t.Helper()
	var tl *ItemTooLargeError
	require.ErrorAs(t, err, &tl)
	require.Equal(t, MaxItemSize, tl.Limit)
	return tl.Line
}

func drop([]any) error { return nil }

// An item larger than 256 KiB fails the read at the line it begins on,
// having read little more than 256 KiB of it, however long it runs on.
// (Not parallel: it measures what the process allocates.)
func TestItemLargerThan256KiB(t *testing.T) {
	huge := func(prefix, c string) io.Reader {
		return io.MultiReader(strings.NewReader(prefix), &endless{c: c[0], n: 100 << 20})
	}
	for _, tc := range []struct {
		name string
		body func() io.Reader
		cfg  interp.ReaderConfig
		line int64
	}{
		{"a CSV field of 100 MB", func() io.Reader { return huge("id,name\n1,a\n2,\"", "x") }, interp.ReaderConfig{InputType: "CSV"}, 3},
		{"a CSV header of 100 MB", func() io.Reader { return huge("", "x") }, interp.ReaderConfig{InputType: "CSV"}, 1},
		{"a CSV record after quoted newlines", func() io.Reader { return huge("id,note\n1,\"two\nlines\"\n\n2,", "x") }, interp.ReaderConfig{InputType: "CSV"}, 5},
		{"a CSV record of 100 MB of newlines in quotes", func() io.Reader { return huge("a\n\"", "\n") }, interp.ReaderConfig{InputType: "CSV"}, 2},
		{"a JSON Lines line of 100 MB", func() io.Reader { return huge("{\"a\":1}\n\n\"", "x") }, interp.ReaderConfig{InputType: "JSONL"}, 3},
		{"a JSON array item of 100 MB", func() io.Reader { return huge("[1,\n 2,\n \"", "x") }, interp.ReaderConfig{InputType: "JSON"}, 3},
		{"a JSON array item of 100 MB of spaces", func() io.Reader { return huge("[1,", " ") }, interp.ReaderConfig{InputType: "JSON"}, 1},
	} {
		var err error
		alloc := allocated(func() { err = Stream(tc.body(), &tc.cfg, drop) })
		require.Equal(t, tc.line, tooLarge(t, err), tc.name)
		require.Less(t, alloc, uint64(16<<20), "%s: allocated %d bytes", tc.name, alloc)
	}

	// A gzip-compressed data file of an Athena manifest (1 GiB of one
	// line, a megabyte compressed): the read stops at the item.
	var err error
	alloc := allocated(func() {
		err = StreamAthenaFile(gzipped(&endless{c: 'x', n: 1 << 30}), &interp.ReaderConfig{InputType: "CSV"}, drop)
	})
	require.Equal(t, int64(1), tooLarge(t, err))
	require.Less(t, alloc, uint64(16<<20))
	err = StreamAthenaFile(gzipped(io.MultiReader(strings.NewReader("{}\n"), &endless{c: 'x', n: 1 << 30})), &interp.ReaderConfig{InputType: "JSONL"}, drop)
	require.Equal(t, int64(2), tooLarge(t, err))

	// So does an S3 inventory's file, its rest not decompressed.
	m := &Manifest{Bucket: "b", Schema: []string{"Bucket", "Key"}}
	alloc = allocated(func() { err = m.StreamInventory(gzipped(&endless{c: 'x', n: 1 << 30}), 0, drop) })
	require.Equal(t, int64(1), tooLarge(t, err))
	require.Less(t, alloc, uint64(16<<20))

	require.EqualError(t, &ItemTooLargeError{Line: 3, Limit: MaxItemSize}, "The item at line 3 is larger than 256 KiB, the most an item may be.")
	fl := (&ItemTooLargeError{Line: 3, Limit: MaxItemSize}).Failure("s3://data/big.csv")
	require.Equal(t, "States.ItemReaderFailed: The item at line 3 of s3://data/big.csv is larger than 256 KiB, the most an item may be.", fl.Error())
}

// An item of 256 KiB is read; one byte more is refused.
func TestItemOf256KiB(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  interp.ReaderConfig
		item func(n int) string // an item of n bytes: its text, its line ending counted, or its object
		line int64
	}{
		// A CSV item is its object: {"a":"x…"} of n bytes.
		{interp.ReaderConfig{InputType: "CSV", CSVHeaderLocation: "GIVEN", CSVHeaders: []string{"a"}}, func(n int) string { return strings.Repeat("x", n-8) + "\n" }, 2},
		{interp.ReaderConfig{InputType: "JSONL"}, func(n int) string { return `"` + strings.Repeat("x", n-3) + "\"\n" }, 2},
		{interp.ReaderConfig{InputType: "JSON"}, func(n int) string { return `"` + strings.Repeat("x", n-2) + `"` }, 1},
	} {
		frame := func(item string) string {
			if tc.cfg.InputType == "JSON" {
				return "[1," + item + ",\n2]"
			}
			return "1\n" + item + "2\n"
		}
		items, err := Parse([]byte(frame(tc.item(MaxItemSize))), &tc.cfg)
		require.NoError(t, err, tc.cfg.InputType)
		require.Len(t, items, 3, tc.cfg.InputType)
		_, err = Parse([]byte(frame(tc.item(MaxItemSize+1))), &tc.cfg)
		require.Equal(t, tc.line, tooLarge(t, err), tc.cfg.InputType)
	}
}

// A JSON object read whole for ItemsPointer is read at most 64 MiB.
func TestPointedObjectBounded(t *testing.T) {
	t.Parallel()
	body := io.MultiReader(strings.NewReader(`{"rows": [1], "pad": "`), &endless{c: 'x', n: 1 << 30})
	err := Stream(body, &interp.ReaderConfig{InputType: "JSON", ItemsPointer: "/rows"}, drop)
	require.EqualError(t, err, "States.ItemReaderFailed: The JSON object is larger than 64 MiB, the most read whole to find the items in (a JSON array, JSON Lines or CSV are read an item at a time).")
	items, err := Parse([]byte(`{"rows": [1, 2]}`), &interp.ReaderConfig{InputType: "JSON", ItemsPointer: "/rows"})
	require.NoError(t, err)
	require.Len(t, items, 2)
}

// A CSV header of many columns over rows of a byte each: each row would
// be an object as wide as the header, so a row whose object passes 256
// KiB fails the read at its line, though its text is short.
func TestCSVRowObjectLargerThan256KiB(t *testing.T) {
	var b strings.Builder
	for i := range 30000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "c%05d", i)
	}
	header := b.String()
	require.Less(t, len(header), MaxItemSize, "the header itself is a record AWS takes")
	body := header + "\n" + strings.Repeat(",", 29999) + "\n"
	err := Stream(strings.NewReader(body), &interp.ReaderConfig{InputType: "CSV"}, drop)
	require.Equal(t, int64(2), tooLarge(t, err))

	// A narrower header of the same rows is read.
	var items int
	err = Stream(strings.NewReader("a,b\n1,2\n3,4\n"), &interp.ReaderConfig{InputType: "CSV"}, func(batch []any) error { items += len(batch); return nil })
	require.NoError(t, err)
	require.Equal(t, 2, items)
}
