package itemreader

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// sensorRow is a row of the Parquet files the tests write, of every kind
// of column the reader maps.
type sensorRow struct {
	ID      int64     `parquet:"id"`
	Sensor  string    `parquet:"sensor"`
	Reading float64   `parquet:"reading"`
	Ok      bool      `parquet:"ok"`
	At      time.Time `parquet:"at,timestamp(millisecond)"`
	Note    *string   `parquet:"note,optional"`
	Tags    []string  `parquet:"tags,list"`
	Raw     []byte    `parquet:"raw"`
	Place   struct {
		Floor int32 `parquet:"floor"`
	} `parquet:"place"`
	Counts   map[string]int64 `parquet:"counts"`
	Price    int64            `parquet:"price,decimal(2:18)"`
	Small    int32            `parquet:"small"`
	Fraction float32          `parquet:"fraction"`
}

// parquetFile writes rows to a Parquet file, rowsPerGroup rows to a row
// group (0: one group).
func parquetFile[T any](t testing.TB, rows []T, rowsPerGroup int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	var opts []parquet.WriterOption
	if rowsPerGroup > 0 {
		opts = append(opts, parquet.MaxRowsPerRowGroup(rowsPerGroup))
	}
	w := parquet.NewGenericWriter[T](&buf, opts...)
	_, err := w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func sensorRows(n int) []sensorRow {
	rows := make([]sensorRow, n)
	for i := range rows {
		rows[i] = sensorRow{ID: int64(i + 1), Sensor: "s" + string(rune('a'+i%26)), Reading: float64(i) + 0.5, Ok: i%2 == 0,
			At: time.Date(2025, 9, 1, 12, 0, i%60, 250e6, time.UTC), Tags: []string{}, Counts: map[string]int64{}, Price: int64(100*i + 5)}
	}
	return rows
}

func TestParquetRowsAreObjects(t *testing.T) {
	note := "checked"
	rows := []sensorRow{{ID: 7, Sensor: "north", Reading: 21.5, Ok: true, At: time.Date(2025, 9, 1, 12, 30, 0, 125e6, time.UTC),
		Note: &note, Tags: []string{"hot", "roof"}, Raw: []byte{0xff, 0x00}, Counts: map[string]int64{"b": 2, "a": 1},
		Price: 1234, Small: -3, Fraction: 0.5}}
	rows[0].Place.Floor = 4
	rows = append(rows, sensorRow{ID: 8, Sensor: "south", Raw: []byte("plain"), Tags: []string{}, Counts: map[string]int64{}})
	items, err := ParseParquet(parquetFile(t, rows, 0), 0)
	require.NoError(t, err)
	require.Equal(t, `[{"id":7,"sensor":"north","reading":21.5,"ok":true,"at":"2025-09-01T12:30:00.125Z","note":"checked",`+
		`"tags":["hot","roof"],"raw":"/wA=","place":{"floor":4},"counts":{"a":1,"b":2},"price":12.34,"small":-3,"fraction":0.5},`+
		`{"id":8,"sensor":"south","reading":0,"ok":false,"at":"0001-01-01T00:00:00Z","note":null,"tags":[],"raw":"plain",`+
		`"place":{"floor":0},"counts":{},"price":0,"small":0,"fraction":0}]`, jsonvalue.String(items),
		"each row an object of the schema's columns in order; Parquet's types as JSON")
}

func TestParquetDatesAndTimes(t *testing.T) {
	type row struct {
		Day   int32 `parquet:"day,date"`
		Clock int64 `parquet:"clock,time(microsecond)"`
		Micro int64 `parquet:"micro,timestamp(microsecond)"`
	}
	items, err := ParseParquet(parquetFile(t, []row{{Day: 20332, Clock: (13*3600 + 5*60 + 7) * 1e6, Micro: 1756728000000001}}, 0), 0)
	require.NoError(t, err)
	require.Equal(t, `[{"day":"2025-09-01","clock":"13:05:07","micro":"2025-09-01T12:00:00.000001Z"}]`, jsonvalue.String(items))

	// INT96, as Athena and Spark write timestamps: nanoseconds of the day,
	// then the Julian day.
	type legacy struct {
		At deprecated.Int96 `parquet:"at"`
	}
	nanos := uint64((12*3600+30*60)*1e9 + 5)
	items, err = ParseParquet(parquetFile(t, []legacy{{At: deprecated.Int96{uint32(nanos), uint32(nanos >> 32), 2440588 + 20332}}}, 0), 0)
	require.NoError(t, err)
	require.Equal(t, `[{"at":"2025-09-01T12:30:00.000000005Z"}]`, jsonvalue.String(items))
}

// onlyReader hides everything of a reader but Read, as an S3 body is.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestParquetStreamsRowGroups(t *testing.T) {
	body := parquetFile(t, sensorRows(2500), 300) // nine row groups
	var batches []int
	var ids []string
	err := streamParquet(onlyReader{bytes.NewReader(body)}, 0, 1000, func(items []any) error {
		batches = append(batches, len(items))
		for _, it := range items {
			id, _ := it.(*jsonvalue.Object).Get("id")
			ids = append(ids, string(id.(jsonvalue.Number)))
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []int{1000, 1000, 500}, batches, "batches of BatchSize across row groups")
	require.Len(t, ids, 2500)
	require.Equal(t, "1", ids[0])
	require.Equal(t, "2500", ids[2499])

	items, err := ParseParquet(body, 301)
	require.NoError(t, err)
	require.Len(t, items, 301, "MaxItems stops within the second row group")
	last, _ := items[300].(*jsonvalue.Object).Get("id")
	require.Equal(t, jsonvalue.Number("301"), last)

	stop := io.ErrClosedPipe
	err = streamParquet(bytes.NewReader(body), 0, 10, func([]any) error { return stop })
	require.ErrorIs(t, err, stop, "emit's error is returned as it is")
}

func TestParquetThroughStream(t *testing.T) {
	body := parquetFile(t, sensorRows(3), 0)
	items, err := Parse(body, &interp.ReaderConfig{InputType: "PARQUET", MaxItems: 2})
	require.NoError(t, err)
	require.Len(t, items, 2)
}

func TestParquetRefused(t *testing.T) {
	good := parquetFile(t, sensorRows(5), 0)
	for name, body := range map[string][]byte{
		"csv":       []byte("a,b\n1,2\n"),
		"empty":     {},
		"magic":     []byte("PAR1PAR1"),
		"truncated": good[:len(good)/2],
		"footer":    append(append([]byte("PAR1"), bytes.Repeat([]byte{7}, 64)...), []byte("\x10\x00\x00\x00PAR1")...),
	} {
		_, err := ParseParquet(body, 0)
		var fl *failure.Failure
		require.ErrorAs(t, err, &fl, name)
		require.Equal(t, failure.ItemReaderFailed, fl.Name, name)
		require.Contains(t, fl.Cause, "The object is not a valid Parquet file", name)
	}
	err := StreamParquet(onlyReader{io.MultiReader(bytes.NewReader(good[:10]), errReader{})}, 0, func([]any) error { return nil })
	require.ErrorIs(t, err, errRead, "a body that cannot be read fails with the read's error")
}

var errRead = io.ErrUnexpectedEOF

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errRead }

// FuzzParquetReader: any object read as Parquet gives at most MaxItems
// objects or fails as States.ItemReaderFailed; it never panics.
func FuzzParquetReader(f *testing.F) {
	f.Add(parquetFile(f, sensorRows(3), 2), uint8(2))
	f.Add(parquetFile(f, []struct {
		A *int32 `parquet:"a,optional"`
	}{{}}, 0), uint8(0))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"), uint8(1))
	f.Add([]byte("not parquet"), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, max uint8) {
		if len(body) > 1<<16 {
			return
		}
		items, err := ParseParquet(body, int64(max%5))
		if err != nil {
			var fl *failure.Failure
			require.ErrorAs(t, err, &fl)
			require.Equal(t, failure.ItemReaderFailed, fl.Name)
			return
		}
		if max%5 > 0 {
			require.LessOrEqual(t, len(items), int(max%5))
		}
		for _, it := range items {
			_, ok := it.(*jsonvalue.Object)
			require.True(t, ok, "each row is an object")
		}
	})
}

// A body read as it arrives goes to a temporary file, read from there
// and removed once read, failed or not.
func TestParquetSpoolsToATemporaryFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	spooled := func() []string {
		names, err := filepath.Glob(filepath.Join(dir, "stepwise-parquet-*"))
		require.NoError(t, err)
		return names
	}
	body := parquetFile(t, sensorRows(10), 4)
	var during []string
	err := StreamParquet(onlyReader{bytes.NewReader(body)}, 0, func([]any) error {
		during = spooled()
		return nil
	})
	require.NoError(t, err)
	require.Len(t, during, 1, "the rows are read from the file")
	require.Empty(t, spooled(), "and the file is removed")

	err = StreamParquet(onlyReader{bytes.NewReader(body[:20])}, 0, func([]any) error { return nil })
	require.Error(t, err)
	require.Empty(t, spooled())

	_, err = ParseParquet(body, 0)
	require.NoError(t, err)
	require.Empty(t, spooled(), "a body in memory is read where it is")
}

// A large Parquet object read as it arrives is read with the heap bounded
// by a row group and a batch, not by the object: 40 MB in row groups of
// 20,000 rows, the batches dropped as they come.
func TestParquetHeapBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 40 MB")
	}
	type wide struct {
		ID      int64  `parquet:"id"`
		Payload string `parquet:"payload"`
	}
	const rows = 400_000
	path := filepath.Join(t.TempDir(), "wide.parquet")
	f, err := os.Create(path)
	require.NoError(t, err)
	w := parquet.NewGenericWriter[wide](f, parquet.MaxRowsPerRowGroup(20_000))
	batch := make([]wide, 0, 1000)
	for i := range rows {
		batch = append(batch, wide{ID: int64(i), Payload: fmt.Sprintf("%08d-%s", i, strings.Repeat(fmt.Sprintf("%x", i*7919), 12))})
		if len(batch) == cap(batch) {
			_, err := w.Write(batch)
			require.NoError(t, err)
			batch = batch[:0]
		}
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	info, err := os.Stat(path)
	require.NoError(t, err)
	size := info.Size()
	require.Greater(t, size, int64(30<<20))

	in, err := os.Open(path)
	require.NoError(t, err)
	defer in.Close()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	n, batches := 0, 0
	var last any
	err = StreamParquet(onlyReader{in}, 0, func(items []any) error {
		n += len(items)
		last = items[len(items)-1]
		if batches++; batches%5 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, rows, n)
	id, _ := last.(*jsonvalue.Object).Get("id")
	require.Equal(t, jsonvalue.Number(fmt.Sprint(rows-1)), id)
	growth := int64(peak) - int64(base)
	t.Logf("object %d MB; heap in use grew by at most %.1f MB", size>>20, float64(growth)/(1<<20))
	require.Less(t, growth, size/4, "the heap grew with the object")
}
