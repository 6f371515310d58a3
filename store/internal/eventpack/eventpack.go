// Package eventpack is how an execution's history is stored: its events
// in rows of consecutive ids, each row the events of (at most) one step,
// packed and compressed together.
//
// A step's events repeat one another (a state's output is the next
// state's input, the envelope's names and the timestamp recur), so a
// row of them compresses to a fraction: the 24 events of a 10-state
// execution, 8.9 KB as JSON, take 1.3 KB. Rows hold at most MaxEvents
// events and about MaxBytes before compression, so that reading one page
// of a long history decodes a bounded amount.
package eventpack

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/klauspost/compress/s2"

	"stepwise/history"
	"stepwise/store"
)

// Codecs of a row's body.
const (
	// One is a single event as the migration that introduced rows copied
	// it: its time in Unix milliseconds, a space, its type, a space and
	// its JSON.
	One int64 = 0
	// S2 is the events' entries compressed together with S2: for each
	// event, its time (a varint, the first absolute in Unix
	// milliseconds, then the difference from the event before), its type
	// and its JSON (each a uvarint length and the bytes). The events' ids
	// are the row's first id and those that follow.
	S2 int64 = 1
)

// Limits of a row: a step with more events, or more bytes, takes several.
const (
	MaxEvents = 256
	MaxBytes  = 64 << 10
)

// maxRaw bounds a row's events before compression: MaxBytes and its last
// event, far below this.
const maxRaw = 256 << 20

// Row is one stored row of an execution's history: the events First to
// Last, encoded in Body by Codec.
type Row struct {
	First, Last int64
	Codec       int64
	Body        []byte
}

// Pack cuts evs, the events of one execution in the order given, into
// rows of consecutive ids and appends them to rows.
func Pack(rows []Row, evs []*store.Event) []Row {
	sc := scratchPool.Get().(*scratch)
	defer sc.put()
	for i := 0; i < len(evs); {
		j, size := i+1, len(evs[i].Body)
		for j < len(evs) && j-i < MaxEvents && size < MaxBytes && evs[j].ID == evs[j-1].ID+1 {
			size += len(evs[j].Body)
			j++
		}
		sc.raw = encode(sc.raw[:0], evs[i:j])
		if n := s2.MaxEncodedLen(len(sc.raw)); cap(sc.packed) < n {
			sc.packed = make([]byte, n)
		}
		rows = append(rows, Row{
			First: evs[i].ID,
			Last:  evs[j-1].ID,
			Codec: S2,
			// The row keeps only the compressed bytes.
			Body: bytes.Clone(s2.Encode(sc.packed[:cap(sc.packed)], sc.raw)),
		})
		i = j
	}
	return rows
}

// scratch holds Pack's buffers between calls: the entries before and
// after compression, which a commit would otherwise allocate at full size
// for every step.
type scratch struct{ raw, packed []byte }

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// put gives the buffers back, unless an unusually large step grew them.
func (sc *scratch) put() {
	if cap(sc.raw) <= 1<<20 && cap(sc.packed) <= 1<<20 {
		scratchPool.Put(sc)
	}
}

func encode(b []byte, evs []*store.Event) []byte {
	n := 0
	for _, ev := range evs {
		n += len(ev.Type) + len(ev.Body) + 3*binary.MaxVarintLen64
	}
	b = slices.Grow(b[:0], n)
	var prev int64
	for i, ev := range evs {
		ms := ev.Timestamp.UnixMilli()
		if i == 0 {
			b = binary.AppendVarint(b, ms)
		} else {
			b = binary.AppendVarint(b, ms-prev)
		}
		prev = ms
		b = binary.AppendUvarint(b, uint64(len(ev.Type)))
		b = append(b, ev.Type...)
		b = binary.AppendUvarint(b, uint64(len(ev.Body)))
		b = append(b, ev.Body...)
	}
	return b
}

// Unpack decodes a row of executionArn's history into its events, and
// appends those whose ids keep (nil: all) to evs.
func Unpack(evs []*store.Event, executionArn string, r *Row, keep func(id int64) bool) ([]*store.Event, error) {
	fail := func(err error) ([]*store.Event, error) {
		return evs, fmt.Errorf("history of %s, events %d to %d: %w", executionArn, r.First, r.Last, err)
	}
	if r.Last < r.First {
		return fail(errors.New("the last id is before the first"))
	}
	switch r.Codec {
	case One:
		if r.Last != r.First {
			return fail(errors.New("a row of one event holds several"))
		}
		ms, rest, ok := bytes.Cut(r.Body, []byte{' '})
		typ, body, ok2 := bytes.Cut(rest, []byte{' '})
		at, err := strconv.ParseInt(string(ms), 10, 64)
		if !ok || !ok2 || err != nil {
			return fail(errors.New("malformed event"))
		}
		if keep == nil || keep(r.First) {
			evs = append(evs, &store.Event{ExecutionArn: executionArn, ID: r.First,
				Type: history.EventType(typ), Timestamp: time.UnixMilli(at).UTC(), Body: body})
		}
		return evs, nil
	case S2:
		// A damaged row must not claim memory it cannot hold.
		if n, err := s2.DecodedLen(r.Body); err != nil || n > maxRaw {
			return fail(fmt.Errorf("a packed size of %d bytes (%v)", n, err))
		}
		raw, err := s2.Decode(nil, r.Body)
		if err != nil {
			return fail(err)
		}
		var at int64
		for id := r.First; id <= r.Last; id++ {
			d, n := binary.Varint(raw)
			if n <= 0 {
				return fail(errors.New("truncated entry"))
			}
			raw = raw[n:]
			if id == r.First {
				at = d
			} else {
				at += d
			}
			var typ, body []byte
			if typ, raw, err = field(raw); err == nil {
				body, raw, err = field(raw)
			}
			if err != nil {
				return fail(err)
			}
			if keep == nil || keep(id) {
				evs = append(evs, &store.Event{ExecutionArn: executionArn, ID: id,
					Type: history.EventType(typ), Timestamp: time.UnixMilli(at).UTC(), Body: body})
			}
		}
		if len(raw) != 0 {
			return fail(errors.New("bytes after the last event"))
		}
		return evs, nil
	default:
		return fail(fmt.Errorf("unknown codec %d", r.Codec))
	}
}

// field reads a uvarint length and that many bytes.
func field(b []byte) (v, rest []byte, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, b, errors.New("truncated entry")
	}
	return b[k : k+int(n) : k+int(n)], b[k+int(n):], nil
}
