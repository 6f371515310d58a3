package itemreader

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

func TestItemsPointer(t *testing.T) {
	doc := `{"meta": {"n": 3}, "data": {"rows": [{"a": 1}, {"a": 2}, {"a": 3}], "a/b": [true], "t~x": ["t"]}, "list": [[0], [1, 2]]}`
	for ptr, want := range map[string]string{
		"/data/rows": `[{"a":1},{"a":2},{"a":3}]`,
		"/data/a~1b": `[true]`,
		"/data/t~0x": `["t"]`,
		"/list/1":    `[1,2]`,
		"/meta":      `[{"Key":"n","Value":3}]`,
	} {
		require.Equal(t, want, parse(t, doc, interp.ReaderConfig{InputType: "JSON", ItemsPointer: ptr}), ptr)
	}
	require.Equal(t, `[{"a":1},{"a":2}]`, parse(t, doc, interp.ReaderConfig{InputType: "JSON", ItemsPointer: "/data/rows", MaxItems: 2}))
	require.Equal(t, `[{"a":1}]`, parse(t, "\ufeff"+doc, interp.ReaderConfig{ItemsPointer: "/data/rows", MaxItems: 1}), "JSON by default")

	for _, c := range []struct {
		body, ptr, typ, cause string
	}{
		{doc, "/meta/n", "JSON", "Attempting to map over non-iterable node."},
		{doc, "/nothing", "JSON", "The provided ReaderConfig.ItemsPointer does not match any valid path in the JSON structure."},
		{doc, "/list/01", "JSON", "The provided ReaderConfig.ItemsPointer does not match any valid path in the JSON structure."},
		{doc, "/list/2", "JSON", "The provided ReaderConfig.ItemsPointer does not match any valid path in the JSON structure."},
		{doc, "data", "JSON", "The ItemsPointer 'data' is not a JSON Pointer: it must be empty or begin with '/'."},
		{doc, "/a~2", "JSON", "The ItemsPointer '/a~2' is not a JSON Pointer: '~' must be followed by '0' or '1'."},
		{`{"rows": [1,}`, "/rows", "JSON", "Attempting to map over non-iterable node."},
		{"{}\n", "/rows", "JSONL", "ItemsPointer is supported only with InputType JSON, not JSONL."},
	} {
		_, err := Parse([]byte(c.body), &interp.ReaderConfig{InputType: c.typ, ItemsPointer: c.ptr})
		var fl *failure.Failure
		require.ErrorAs(t, err, &fl, c.ptr)
		require.Equal(t, failure.ItemReaderFailed, fl.Name)
		require.Equal(t, c.cause, fl.Cause)
	}

	// Streamed in batches, read from a body that comes a byte at a time.
	var batches []int
	err := stream(chunked([]byte(doc), 1), &interp.ReaderConfig{ItemsPointer: "/data/rows"}, 2, func(items []any) error {
		batches = append(batches, len(items))
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []int{2, 1}, batches)
}

// FuzzItemsPointer: any document and pointer either give the items of
// the array or object the pointer names (at most MaxItems) or fail as
// States.ItemReaderFailed; what the reader gives is what resolving the
// pointer in the parsed document gives.
func FuzzItemsPointer(f *testing.F) {
	f.Add([]byte(`{"a": {"b": [1, 2, 3]}}`), "/a/b", uint8(2))
	f.Add([]byte(`{"a~/": [[]]}`), "/a~0~1/0", uint8(0))
	f.Add([]byte(`[[1], {"x": []}]`), "/1/x", uint8(0))
	f.Add([]byte(`{"a": 1}`), "/a", uint8(0))
	f.Add([]byte(`{"a": [1,`), "/a", uint8(0))
	f.Add([]byte(`[]`), "", uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, ptr string, max uint8) {
		items, err := Parse(body, &interp.ReaderConfig{InputType: "JSON", ItemsPointer: ptr, MaxItems: int64(max % 4)})
		if err != nil {
			var fl *failure.Failure
			require.ErrorAs(t, err, &fl)
			require.Equal(t, failure.ItemReaderFailed, fl.Name)
			return
		}
		doc, perr := jsonvalue.Parse(bytes.TrimPrefix(body, bom))
		require.NoError(t, perr, "a document read is JSON")
		want, ok := Resolve(doc, ptr)
		require.True(t, ok)
		arr, isArr := want.([]any)
		if obj, isObj := want.(*jsonvalue.Object); isObj {
			arr, isArr = Entries(obj), true
		}
		require.True(t, isArr)
		if m := int(max % 4); m > 0 && len(arr) > m {
			arr = arr[:m]
		}
		require.Equal(t, jsonvalue.String(arr), jsonvalue.String(items))
	})
}
