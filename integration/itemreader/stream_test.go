package itemreader

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// outcome is what a read came to: its items as JSON, or its failure.
func outcome(items []any, err error) string {
	if err != nil {
		var fl *failure.Failure
		if errors.As(err, &fl) {
			return "failure " + fl.Name + ": " + fl.Cause
		}
		return "error " + err.Error()
	}
	return jsonvalue.String(items)
}

// chunked hands body over as a network would: a byte at a time, half a
// read at a time, or all at once.
func chunked(body []byte, mode uint8) io.Reader {
	switch mode % 3 {
	case 1:
		return iotest.OneByteReader(bytes.NewReader(body))
	case 2:
		return iotest.HalfReader(bytes.NewReader(body))
	}
	return bytes.NewReader(body)
}

// collect streams with batches of size, checking that each batch but the
// last is full and none is empty.
func collect(t *testing.T, size int, read func(emit func([]any) error) error) ([]any, error) {
	t.Helper()
	items := []any{}
	var sizes []int
	err := read(func(batch []any) error {
		sizes = append(sizes, len(batch))
		items = append(items, batch...)
		return nil
	})
	for i, n := range sizes {
		require.Positive(t, n, "an empty batch")
		if i < len(sizes)-1 {
			require.Equal(t, size, n, "a batch before the last is not full: %v", sizes)
		} else {
			require.LessOrEqual(t, n, size)
		}
	}
	return items, err
}

var (
	inputTypes     = []string{"", "JSON", "JSONL", "CSV", "MANIFEST"}
	csvDelimiters  = []string{"", "COMMA", "PIPE", "SEMICOLON", "SPACE", "TAB", "COLON"}
	headerLocation = []string{"", "FIRST_ROW", "GIVEN"}
)

func fuzzConfig(typ, delim, loc uint8, headers string, maxItems int8) *interp.ReaderConfig {
	cfg := &interp.ReaderConfig{
		InputType:         inputTypes[int(typ)%len(inputTypes)],
		CSVDelimiter:      csvDelimiters[int(delim)%len(csvDelimiters)],
		CSVHeaderLocation: headerLocation[int(loc)%len(headerLocation)],
		MaxItems:          int64(maxItems),
	}
	if headers != "" {
		cfg.CSVHeaders = strings.Split(headers, ",")
	}
	return cfg
}

// FuzzStreamMatchesParse: the streaming reader (Parse, and Stream read a
// byte or half a read at a time in batches of any size) comes to exactly
// what the reader before it did with the whole body: the same items, or
// the same failure.
func FuzzStreamMatchesParse(f *testing.F) {
	for _, c := range []struct {
		body string
		typ  uint8
	}{
		{"Col1,Col2\nValue1,Value2\n,,,\n   \nlast\n", 3}, {"a|b\n1|2\n", 3}, {"\ufeffa\r\n1\r\n", 3}, {"a,a\n1,2\n", 3},
		{"a,\"b\nc\",d\n1,\"2\"\"\",3\n\"x", 3}, {"", 3}, {"h\n" + strings.Repeat("r\n", 40), 3},
		{"\ufeff[1]", 1}, {`[1, {"a": 2}, 3]`, 1}, {`{"not": "an array"}`, 1}, {"", 1}, {" [ ] ", 0}, {"[1,]", 1}, {"[,1]", 1},
		{"[]x", 1}, {"[1] [2]", 1}, {`["a,]\"", {"b": [1, {"c": "]}"}]}, -0.5e+10, 1.000000000000000000001]`, 1},
		{"[1}]", 1}, {"[{]}]", 1}, {"[tru, nullx, true]", 1}, {"[\"\xff\"]", 1}, {"[01]", 1}, {"[1\f]", 1}, {"\ufeff\ufeff[1]", 1},
		{strings.Repeat("[", 1000) + strings.Repeat("]", 1000), 1}, {strings.Repeat("[", 1001) + strings.Repeat("]", 1001), 1},
		{"[" + strings.Repeat("[", 999) + strings.Repeat("]", 999) + "," + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + "]", 1},
		{"[" + strings.Repeat("1,", 50) + "2]", 1},
		{"1\n\n{\"a\": 2}\n\"x\"\n", 2}, {"1\n{\n", 2}, {" 1 \r\n\u00a02\u0085\n", 2}, {"1\n2", 2}, {"\n\n", 2},
		{"[1]", 4}, {"[1]", 9},
	} {
		f.Add([]byte(c.body), c.typ, uint8(0), uint8(0), "", int8(0), uint8(0), uint8(0))
		f.Add([]byte(c.body), c.typ, uint8(2), uint8(2), "H,I", int8(2), uint8(2), uint8(1))
	}
	f.Add([]byte("a,b\n1,2\n"), uint8(3), uint8(0), uint8(2), "H,H", int8(0), uint8(0), uint8(0))
	f.Add([]byte("a,b\n1,2\n"), uint8(3), uint8(6), uint8(0), "", int8(0), uint8(0), uint8(0))
	f.Add([]byte("a,b\n1,2\n"), uint8(3), uint8(0), uint8(2), "", int8(-1), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, typ, delim, loc uint8, headers string, maxItems int8, size, mode uint8) {
		cfg := fuzzConfig(typ, delim, loc, headers, maxItems)
		want := outcome(legacyParse(body, cfg))
		require.Equal(t, want, outcome(Parse(body, cfg)), "Parse")
		n := int(size%8) + 1
		got := outcome(collect(t, n, func(emit func([]any) error) error {
			return stream(chunked(body, mode), cfg, n, emit)
		}))
		require.Equal(t, want, got, "stream, batches of %d, mode %d", n, mode)
	})
}

func gz(t testing.TB, text []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(text)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// FuzzStreamInventoryMatches: an inventory file, plain or compressed,
// whole, cut short or damaged, reads as ParseInventory read it before.
func FuzzStreamInventoryMatches(f *testing.F) {
	f.Add([]byte("\"b\",\"k\"\n\"b\",\"k2\",\"x\"\n"), uint8(0), uint16(0), int8(0), uint8(0), uint8(0))
	f.Add([]byte("\"b\",\"k\"\n\"b\",\"k2\",\"x\"\n"), uint8(1), uint16(0), int8(1), uint8(0), uint8(1))
	f.Add([]byte("\"b\",\"k\"\n\"b\",\"k2\"\n"), uint8(2), uint16(30), int8(1), uint8(0), uint8(2))
	f.Add([]byte("\"b\",\"k\"\n\"b\",\"k2\"\n"), uint8(3), uint16(12), int8(0), uint8(1), uint8(0))
	f.Add([]byte("\"b\",\"k\"\n\"b\",\"k2\"\n"), uint8(3), uint16(35), int8(1), uint8(1), uint8(0))
	f.Add([]byte("a\"b,c\n\"x"), uint8(4), uint16(0), int8(0), uint8(0), uint8(0))
	f.Add([]byte("\ufeffa,b\n"), uint8(1), uint16(0), int8(0), uint8(0), uint8(0))
	f.Add([]byte{0x1f, 0x8b, 0}, uint8(0), uint16(0), int8(0), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, how uint8, at uint16, maxItems int8, size, mode uint8) {
		body := data
		switch how % 5 {
		case 1: // compressed
			body = gz(t, data)
		case 2: // compressed, cut short
			body = gz(t, data)
			body = body[:int(at)%(len(body)+1)]
		case 3: // compressed, a byte damaged
			body = gz(t, data)
			body[int(at)%len(body)] ^= 0x5a
		case 4: // two compressed members, then garbage
			body = append(append(gz(t, data), gz(t, data)...), 0x1f, 0x8b, 9)
		}
		m := &Manifest{Bucket: "b", Schema: []string{"Bucket", "Key"}}
		want := outcome(m.legacyParseInventory(body, int64(maxItems)))
		require.Equal(t, want, outcome(m.ParseInventory(body, int64(maxItems))), "ParseInventory")
		n := int(size%8) + 1
		got := outcome(collect(t, n, func(emit func([]any) error) error {
			return m.streamInventory(chunked(body, mode), int64(maxItems), n, emit)
		}))
		require.Equal(t, want, got, "streamInventory, batches of %d, mode %d", n, mode)
	})
}

// A JSON Lines line is refused from the same length on as the
// bufio.Scanner before it refused it, whether it fits in the read buffer
// or not.
func TestStreamJSONLLineLimit(t *testing.T) {
	defer func(old int) { maxItemSize = old }(maxItemSize)
	for _, limit := range []int{8, 200_000} {
		maxItemSize = limit
		for _, l := range []int{limit - 2, limit - 1, limit, limit + 1, 3 * limit} {
			for _, end := range []string{"", "\n", "\r\n", "\n2\n"} {
				line := `"` + strings.Repeat("x", max(l-2, 0)) + `"`
				for _, body := range []string{line + end, "1\n" + line + end, "\n\n" + line + end} {
					cfg := &interp.ReaderConfig{InputType: "JSONL"}
					want := outcome(legacyParse([]byte(body), cfg))
					require.Equal(t, want, outcome(Parse([]byte(body), cfg)), "limit %d, line %d, end %q", limit, l, end)
					got := outcome(collect(t, 1, func(emit func([]any) error) error {
						return stream(iotest.HalfReader(strings.NewReader(body)), cfg, 1, emit)
					}))
					require.Equal(t, want, got, "limit %d, line %d, end %q", limit, l, end)
				}
			}
		}
	}
}

// Items come in batches of BatchSize as they are read; MaxItems stops
// the read.
func TestStreamBatches(t *testing.T) {
	var csv strings.Builder
	csv.WriteString("id,name\n")
	for i := range 2500 {
		fmt.Fprintf(&csv, "%d,n%d\n", i, i)
	}
	var sizes []int
	var last any
	err := Stream(strings.NewReader(csv.String()), &interp.ReaderConfig{InputType: "CSV", MaxItems: 2100}, func(items []any) error {
		sizes = append(sizes, len(items))
		last = items[len(items)-1]
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []int{1000, 1000, 100}, sizes)
	require.Equal(t, `{"id":"2099","name":"n2099"}`, jsonvalue.String(last))

	// emit's error stops the read and is returned as it is.
	stop := errors.New("stop")
	calls := 0
	err = Stream(strings.NewReader(csv.String()), &interp.ReaderConfig{InputType: "CSV"}, func([]any) error {
		calls++
		return stop
	})
	require.Same(t, stop, err)
	require.Equal(t, 1, calls)
	m := &Manifest{Bucket: "b", Schema: []string{"id", "name"}}
	calls = 0
	err = m.StreamInventory(bytes.NewReader(gz(t, []byte(csv.String()))), 0, func([]any) error {
		calls++
		return stop
	})
	require.Same(t, stop, err)
	require.Equal(t, 1, calls)
}

// A body that cannot be read fails with the reader's error, not as data
// that does not parse.
func TestStreamReadError(t *testing.T) {
	broken := errors.New("connection reset")
	body := func(text string) io.Reader {
		return io.MultiReader(strings.NewReader(text), iotest.ErrReader(broken))
	}
	for _, c := range []struct {
		text string
		cfg  interp.ReaderConfig
	}{
		{`[1, 2, {"a": `, interp.ReaderConfig{InputType: "JSON"}},
		{"1\n2\n{", interp.ReaderConfig{InputType: "JSONL"}},
		{"a,b\n1,2\n3", interp.ReaderConfig{InputType: "CSV"}},
		{"", interp.ReaderConfig{InputType: "CSV"}},
	} {
		err := Stream(body(c.text), &c.cfg, func([]any) error { return nil })
		require.Same(t, broken, err, "%s", c.cfg.InputType)
	}
	m := &Manifest{Bucket: "b", Schema: []string{"a"}}
	compressed := gz(t, []byte("1\n2\n3\n"))
	for _, cut := range []int{1, 5, len(compressed) - 3} {
		err := m.StreamInventory(body(string(compressed[:cut])), 0, func([]any) error { return nil })
		require.Same(t, broken, err, "cut at %d", cut)
	}
	require.Same(t, broken, m.StreamInventory(body("1\n2"), 0, func([]any) error { return nil }))
	// Past MaxItems, what could not be read does not matter.
	require.NoError(t, Stream(body("a\n1\n2\n"), &interp.ReaderConfig{InputType: "CSV", MaxItems: 1}, func([]any) error { return nil }))
}
