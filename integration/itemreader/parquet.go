package itemreader

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"stepwise/failure"
	"stepwise/jsonvalue"
)

// A Parquet object (InputType PARQUET) is read a row group at a time, a
// few rows at a time: each row is an item, a JSON object whose members
// are the schema's top-level columns in the schema's order. Parquet's
// types become JSON as follows: booleans, integers and floating-point
// numbers are JSON's (NaN and the infinities, which JSON lacks, the
// strings "NaN", "Infinity" and "-Infinity"); DECIMAL a number; STRING,
// ENUM, JSON and UUID columns strings; other byte arrays a string when
// they are UTF-8, else their base64; DATE "2006-01-02"; TIMESTAMP an
// RFC 3339 time in UTC with as many fraction digits as it has; TIME
// "15:04:05" with its fraction; INT96 (the timestamps of Hive, Spark and
// Athena) as TIMESTAMP; a null null; LIST an array, MAP an
// object, a group an object of its fields.
//
// Parquet needs the end of the object first (its footer names the row
// groups), so a body that cannot be read at random (an S3 object read as
// it arrives) is first copied to a temporary file, which is removed once
// read: the rows are read from there, never the whole object in memory.

// parquetMagic begins and ends every Parquet file.
var parquetMagic = []byte("PAR1")

// parquetRowsAtATime is how many rows are decoded together.
const parquetRowsAtATime = 128

// notParquet is the failure of an object that is not a Parquet file.
func notParquet(detail string) error {
	if detail == "" {
		return readerFailure("The object is not a valid Parquet file.")
	}
	return readerFailure("The object is not a valid Parquet file: %s", detail)
}

// StreamParquet reads the rows of the Parquet object r, at most maxItems
// (0 for all), handing them to emit at most BatchSize at a time. r is
// read from a temporary file unless it can be read at random already
// (an io.ReaderAt that is an io.Seeker, such as a bytes.Reader).
func StreamParquet(r io.Reader, maxItems int64, emit func(items []any) error) error {
	return streamParquet(r, maxItems, BatchSize, emit)
}

// ParseParquet is StreamParquet over a body in memory, collected.
func ParseParquet(body []byte, maxItems int64) ([]any, error) {
	return Collect(func(emit func([]any) error) error { return StreamParquet(bytes.NewReader(body), maxItems, emit) })
}

func streamParquet(r io.Reader, maxItems int64, size int, emit func([]any) error) error {
	at, n, done, err := randomAccess(r)
	if err != nil {
		return err
	}
	defer done()
	out := &sink{emit: emit, size: size, max: maxItems}
	if err := readParquet(at, n, out); err != nil {
		if out.err != nil {
			return out.err
		}
		return err
	}
	return out.flush()
}

// randomAccess is r as an io.ReaderAt of n bytes, copied to a temporary
// file where it must be; done removes the file.
func randomAccess(r io.Reader) (at io.ReaderAt, n int64, done func(), err error) {
	if ra, ok := r.(interface {
		io.ReaderAt
		io.Seeker
	}); ok {
		if n, err = ra.Seek(0, io.SeekEnd); err == nil {
			return ra, n, func() {}, nil
		}
	}
	f, err := os.CreateTemp("", "stepwise-parquet-*")
	if err != nil {
		return nil, 0, nil, fmt.Errorf("a Parquet object needs a temporary file: %w", err)
	}
	done = func() {
		f.Close()
		os.Remove(f.Name())
	}
	src := &source{r: r}
	if n, err = io.Copy(f, src); err != nil {
		done()
		return nil, 0, nil, err
	}
	return f, n, done, nil
}

// readParquet reads the rows of the file at r into out. The Parquet
// library may panic on a corrupt file: that is the file's failure too.
func readParquet(r io.ReaderAt, size int64, out *sink) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = notParquet(fmt.Sprint(p))
		}
		var fl *failure.Failure
		if err != nil && out.err == nil && !errors.As(err, &fl) {
			err = notParquet(err.Error())
		}
	}()
	if size < int64(2*len(parquetMagic)+4) {
		return notParquet("it is too short")
	}
	head := make([]byte, len(parquetMagic))
	tail := make([]byte, len(parquetMagic))
	if _, err := r.ReadAt(head, 0); err != nil {
		return err
	}
	if _, err := r.ReadAt(tail, size-int64(len(tail))); err != nil {
		return err
	}
	if !bytes.Equal(head, parquetMagic) || !bytes.Equal(tail, parquetMagic) {
		return notParquet("it does not begin and end with PAR1")
	}
	f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true),
		parquet.ReadBufferSize(256*1024))
	if err != nil {
		return err
	}
	schema := f.Schema()
	fields := schema.Fields()
	buf := make([]parquet.Row, parquetRowsAtATime)
	for _, rg := range f.RowGroups() {
		if out.full() {
			return nil
		}
		rows := rg.Rows()
		for !out.full() {
			n, rerr := rows.ReadRows(buf)
			for _, row := range buf[:n] {
				if out.full() {
					break
				}
				m := map[string]any{}
				if err := schema.Reconstruct(&m, row); err != nil {
					rows.Close()
					return err
				}
				item := groupJSON(fields, m)
				if err := out.add(item); err != nil {
					rows.Close()
					return err
				}
			}
			if errors.Is(rerr, io.EOF) {
				break
			}
			if rerr != nil {
				rows.Close()
				return rerr
			}
			if n == 0 {
				break
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
	}
	return nil
}

// groupJSON is the object of a group's reconstructed fields, in the
// schema's order.
func groupJSON(fields []parquet.Field, m map[string]any) *jsonvalue.Object {
	obj := jsonvalue.NewObject(len(fields))
	for _, f := range fields {
		v, ok := m[f.Name()]
		if !ok {
			obj.Set(f.Name(), nil)
			continue
		}
		obj.Set(f.Name(), nodeJSON(f, v))
	}
	return obj
}

// logical is a node's logical type, nil where it has none (or where the
// library cannot say, as for a plain group).
func logical(n parquet.Node) (lt *format.LogicalType) {
	defer func() {
		if recover() != nil {
			lt = nil
		}
	}()
	t := n.Type()
	if t == nil {
		return nil
	}
	return t.LogicalType()
}

// nodeJSON is the JSON of a value of node n, as the Parquet library
// reconstructed it.
func nodeJSON(n parquet.Node, v any) any {
	if v == nil {
		return nil
	}
	if n.Repeated() {
		if list, ok := v.([]any); ok {
			out := make([]any, len(list))
			for i, e := range list {
				out[i] = valueJSON(n, e)
			}
			return out
		}
	}
	return valueJSON(n, v)
}

// valueJSON is the JSON of one (not repeated) value of node n.
func valueJSON(n parquet.Node, v any) any {
	if v == nil {
		return nil
	}
	lt := logical(n)
	if !n.Leaf() {
		switch {
		case lt != nil && isList(lt):
			list, ok := v.([]any)
			if !ok {
				return goJSON(v)
			}
			elem := listElement(n)
			out := make([]any, len(list))
			for i, e := range list {
				if elem == nil {
					out[i] = goJSON(e)
				} else {
					out[i] = valueJSON(elem, e)
				}
			}
			return out
		case lt != nil && isMap(lt):
			m, ok := v.(map[string]any)
			if !ok {
				return goJSON(v)
			}
			val := mapValue(n)
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			obj := jsonvalue.NewObject(len(keys))
			for _, k := range keys {
				if val == nil {
					obj.Set(k, goJSON(m[k]))
				} else {
					obj.Set(k, valueJSON(val, m[k]))
				}
			}
			return obj
		}
		if m, ok := v.(map[string]any); ok {
			return groupJSON(n.Fields(), m)
		}
		return goJSON(v)
	}
	if lt != nil {
		switch t := lt.Value.(type) {
		case *format.TimestampType:
			if ticks, ok := asInt64(v); ok {
				return instant(ticks, t.Unit.Value).Format(time.RFC3339Nano)
			}
		case *format.DateType:
			if days, ok := asInt64(v); ok {
				return time.Unix(days*86400, 0).UTC().Format(time.DateOnly)
			}
		case *format.TimeType:
			if ticks, ok := asInt64(v); ok {
				return instant(ticks, t.Unit.Value).Format("15:04:05.999999999")
			}
		}
	}
	switch t := v.(type) {
	case time.Time:
		return t.UTC().Format(time.RFC3339Nano)
	case deprecated.Int96:
		return int96Time(t).Format(time.RFC3339Nano)
	}
	return goJSON(v)
}

// julianUnixEpoch is the Julian day number of 1970-01-01.
const julianUnixEpoch = 2440588

// int96Time is the time of an INT96 timestamp, as Hive, Impala, Spark and
// Athena write them: the nanoseconds of the day (the low 64 bits), then
// the Julian day.
func int96Time(v deprecated.Int96) time.Time {
	nanos := int64(uint64(v[1])<<32 | uint64(v[0]))
	days := int64(v[2]) - julianUnixEpoch
	return time.Unix(days*86400, 0).Add(time.Duration(nanos)).UTC()
}

// instant is the time ticks units after the Unix epoch, in UTC.
func instant(ticks int64, unit format.TimeUnitValue) time.Time {
	switch unit.(type) {
	case *format.MilliSeconds:
		return time.UnixMilli(ticks).UTC()
	case *format.MicroSeconds:
		return time.UnixMicro(ticks).UTC()
	}
	return time.Unix(0, ticks).UTC()
}

func isList(lt *format.LogicalType) bool { _, ok := lt.Value.(*format.ListType); return ok }
func isMap(lt *format.LogicalType) bool  { _, ok := lt.Value.(*format.MapType); return ok }

// listElement is the element node of a LIST group (its repeated group's
// one field), nil where the group is not laid out so.
func listElement(n parquet.Node) parquet.Node {
	f := n.Fields()
	if len(f) != 1 {
		return nil
	}
	if f[0].Leaf() {
		return f[0]
	}
	inner := f[0].Fields()
	if len(inner) != 1 {
		return nil
	}
	return inner[0]
}

// mapValue is the value node of a MAP group, nil where the group is not
// laid out so.
func mapValue(n parquet.Node) parquet.Node {
	f := n.Fields()
	if len(f) != 1 || f[0].Leaf() {
		return nil
	}
	kv := f[0].Fields()
	if len(kv) != 2 {
		return nil
	}
	return kv[1]
}

func asInt64(v any) (int64, bool) {
	switch t := v.(type) {
	case int64:
		return t, true
	case int32:
		return int64(t), true
	case int:
		return int64(t), true
	}
	return 0, false
}

// goJSON is the JSON of a value the Parquet library reconstructed.
func goJSON(v any) any {
	switch t := v.(type) {
	case nil, bool, string:
		if s, ok := t.(string); ok && !utf8.ValidString(s) {
			return base64.StdEncoding.EncodeToString([]byte(s))
		}
		return t
	case []byte:
		if utf8.Valid(t) {
			return string(t)
		}
		return base64.StdEncoding.EncodeToString(t)
	case int:
		return jsonvalue.NumberFromInt(int64(t))
	case int8:
		return jsonvalue.NumberFromInt(int64(t))
	case int16:
		return jsonvalue.NumberFromInt(int64(t))
	case int32:
		return jsonvalue.NumberFromInt(int64(t))
	case int64:
		return jsonvalue.NumberFromInt(t)
	case uint8:
		return jsonvalue.NumberFromInt(int64(t))
	case uint16:
		return jsonvalue.NumberFromInt(int64(t))
	case uint32:
		return jsonvalue.NumberFromInt(int64(t))
	case uint64:
		return jsonvalue.Number(fmt.Sprint(t))
	case float32:
		return floatJSON(float64(t))
	case float64:
		return floatJSON(t)
	case time.Time:
		return t.UTC().Format(time.RFC3339Nano)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = goJSON(e)
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		obj := jsonvalue.NewObject(len(keys))
		for _, k := range keys {
			obj.Set(k, goJSON(t[k]))
		}
		return obj
	}
	return fmt.Sprint(v)
}

func floatJSON(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return jsonvalue.NumberFromFloat(f)
}
