package eventpack

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/store"
)

const arn = "arn:aws:states:us-east-1:123456789012:execution:sm:x"

var base = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func events(from, to int64, body func(id int64) string) []*store.Event {
	var evs []*store.Event
	for id := from; id <= to; id++ {
		evs = append(evs, &store.Event{ExecutionArn: arn, ID: id, Type: history.EventType(fmt.Sprintf("Type%d", id%3)),
			Timestamp: base.Add(time.Duration(id*id) * time.Millisecond), Body: []byte(body(id))})
	}
	return evs
}

func unpackAll(t *testing.T, rows []Row) []*store.Event {
	t.Helper()
	var evs []*store.Event
	for i := range rows {
		var err error
		evs, err = Unpack(evs, arn, &rows[i], nil)
		require.NoError(t, err)
	}
	return evs
}

func TestPack(t *testing.T) {
	t.Parallel()

	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		evs := events(1, 24, func(id int64) string { return fmt.Sprintf(`{"id":%d,"input":"{\"order\":{\"id\":\"o-1\"}}"}`, id) })
		rows := Pack(nil, evs)
		require.Len(t, rows, 1)
		require.Equal(t, Row{First: 1, Last: 24, Codec: S2, Body: rows[0].Body}, rows[0])
		require.Equal(t, evs, unpackAll(t, rows))
		// The events repeat one another: the row is a fraction of them.
		size := 0
		for _, ev := range evs {
			size += len(ev.Body)
		}
		require.Less(t, len(rows[0].Body), size/3)
	})

	t.Run("TimeGoesBack", func(t *testing.T) {
		t.Parallel()
		evs := events(1, 3, func(int64) string { return `{}` })
		evs[1].Timestamp = base.Add(-time.Hour)
		evs[2].Timestamp = time.UnixMilli(0).UTC()
		require.Equal(t, evs, unpackAll(t, Pack(nil, evs)))
	})

	t.Run("Cuts", func(t *testing.T) {
		t.Parallel()
		// A gap in the ids, more than MaxEvents, and more than MaxBytes
		// each start a row.
		evs := append(events(1, 3, func(int64) string { return `{}` }), events(10, 10+MaxEvents, func(int64) string { return `{}` })...)
		big := events(1000, 1002, func(int64) string { return `"` + strings.Repeat("x", MaxBytes) + `"` })
		evs = append(evs, big...)
		rows := Pack(nil, evs)
		var spans [][2]int64
		for _, r := range rows {
			spans = append(spans, [2]int64{r.First, r.Last})
		}
		require.Equal(t, [][2]int64{{1, 3}, {10, 9 + MaxEvents}, {10 + MaxEvents, 10 + MaxEvents}, {1000, 1000}, {1001, 1001}, {1002, 1002}}, spans)
		require.Equal(t, evs, unpackAll(t, rows))
	})

	t.Run("Keep", func(t *testing.T) {
		t.Parallel()
		evs := events(5, 9, func(int64) string { return `{}` })
		rows := Pack(nil, evs)
		got, err := Unpack(nil, arn, &rows[0], func(id int64) bool { return id%2 == 1 })
		require.NoError(t, err)
		require.Equal(t, []*store.Event{evs[0], evs[2], evs[4]}, got)
	})
}

func TestUnpack(t *testing.T) {
	t.Parallel()

	t.Run("One", func(t *testing.T) {
		t.Parallel()
		got, err := Unpack(nil, arn, &Row{First: 7, Last: 7, Codec: One, Body: []byte(`1795787909671 PassStateEntered {"a": "b c"}`)}, nil)
		require.NoError(t, err)
		require.Equal(t, []*store.Event{{ExecutionArn: arn, ID: 7, Type: "PassStateEntered",
			Timestamp: time.UnixMilli(1795787909671).UTC(), Body: []byte(`{"a": "b c"}`)}}, got)
	})

	good := Pack(nil, events(1, 3, func(int64) string { return `{"x":1}` }))[0]
	for name, tc := range map[string]struct {
		row  Row
		want string
	}{
		"UnknownCodec":    {Row{First: 1, Last: 1, Codec: 9, Body: []byte("x")}, "unknown codec 9"},
		"LastBeforeFirst": {Row{First: 2, Last: 1, Codec: S2, Body: good.Body}, "last id is before the first"},
		"OneOfSeveral":    {Row{First: 1, Last: 2, Codec: One, Body: []byte("1 T {}")}, "holds several"},
		"OneMalformed":    {Row{First: 1, Last: 1, Codec: One, Body: []byte("soon T {}")}, "malformed event"},
		"NotS2":           {Row{First: 1, Last: 3, Codec: S2, Body: []byte("not compressed")}, "events 1 to 3"},
		"FewerEvents":     {Row{First: 1, Last: 4, Codec: S2, Body: good.Body}, "truncated entry"},
		"MoreEvents":      {Row{First: 1, Last: 2, Codec: S2, Body: good.Body}, "bytes after the last event"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Unpack(nil, arn, &tc.row, nil)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "history of "+arn)
		})
	}
}

// Rows read back from a damaged database fail cleanly, never panic, and
// what packs unpacks to itself.
func FuzzUnpack(f *testing.F) {
	f.Add(int64(1), int64(3), int64(1), Pack(nil, events(1, 3, func(int64) string { return `{"x":1}` }))[0].Body)
	f.Add(int64(1), int64(1), int64(0), []byte("12 T {}"))
	f.Fuzz(func(t *testing.T, first, last, codec int64, body []byte) {
		if last-first > 10_000 {
			return
		}
		evs, err := Unpack(nil, arn, &Row{First: first, Last: last, Codec: codec, Body: body}, nil)
		if err != nil {
			return
		}
		rows := Pack(nil, evs)
		again := unpackAll(t, rows)
		require.Equal(t, len(evs), len(again))
		for i := range evs {
			require.Equal(t, evs[i].ID, again[i].ID)
			require.Equal(t, evs[i].Type, again[i].Type)
			require.True(t, evs[i].Timestamp.Equal(again[i].Timestamp))
			require.True(t, bytes.Equal(evs[i].Body, again[i].Body))
		}
	})
}

// BenchmarkPack packs the 24 events of a 10-state execution (each with
// a ~200-byte payload), as a commit does for each step.
//
//	go test ./store/internal/eventpack/ -run '^$' -bench Pack -benchmem
func BenchmarkPack(b *testing.B) {
	evs := events(1, 24, func(id int64) string {
		return fmt.Sprintf(`{"id":%d,"input":"{\"order\":{\"id\":\"o-12345\",\"customer\":\"Ada Lovelace\",\"items\":[{\"sku\":\"A1\",\"qty\":2},{\"sku\":\"B7\",\"qty\":1}],\"note\":\"leave at the door\"},\"step\":%d}"}`, id, id/2)
	})
	var rows []Row
	b.ReportAllocs()
	for b.Loop() {
		rows = Pack(rows[:0], evs)
	}
	b.ReportMetric(float64(len(rows[0].Body)), "bytes/row")
}
