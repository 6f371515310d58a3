package itemreader

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

func parse(t *testing.T, body string, cfg interp.ReaderConfig) string {
	t.Helper()
	items, err := Parse([]byte(body), &cfg)
	require.NoError(t, err)
	return jsonvalue.String(items)
}

func TestParse(t *testing.T) {
	csv := "Col1,Col2\nValue1,Value2\n,,,\n   \nlast\n"
	require.Equal(t, `[{"Col1":"Value1","Col2":"Value2"},{"Col1":"","Col2":""},{"Col1":"   ","Col2":""},{"Col1":"last","Col2":""}]`,
		parse(t, csv, interp.ReaderConfig{InputType: "CSV", CSVHeaderLocation: "FIRST_ROW"}),
		"extra fields are dropped, missing ones empty")
	require.Equal(t, `[{"A":"Col1"},{"A":"Value1"}]`,
		parse(t, csv, interp.ReaderConfig{InputType: "CSV", CSVHeaderLocation: "GIVEN", CSVHeaders: []string{"A"}, MaxItems: 2}))
	require.Equal(t, `[{"a":"1","b":"2"}]`, parse(t, "a|b\n1|2\n", interp.ReaderConfig{InputType: "CSV", CSVDelimiter: "PIPE"}))
	require.Equal(t, `[]`, parse(t, "", interp.ReaderConfig{InputType: "CSV"}))
	require.Equal(t, `[{"a":"1"}]`, parse(t, "\ufeffa\r\n1\r\n", interp.ReaderConfig{InputType: "CSV"}), "a byte order mark and CRLF lines")
	require.Equal(t, `[1]`, parse(t, "\ufeff[1]", interp.ReaderConfig{InputType: "JSON"}))
	require.Equal(t, `[1,{"a":2}]`, parse(t, `[1, {"a": 2}, 3]`, interp.ReaderConfig{InputType: "JSON", MaxItems: 2}))
	require.Equal(t, `[1,{"a":2},"x"]`, parse(t, "1\n\n{\"a\": 2}\n\"x\"\n", interp.ReaderConfig{InputType: "JSONL"}))
	require.Equal(t, `[{"Key":"b","Value":[1]},{"Key":"a","Value":{"x":2}}]`, parse(t, ` {"b": [1], "a": {"x": 2}, "c": 3}`, interp.ReaderConfig{InputType: "JSON", MaxItems: 2}),
		"an object's members are the items, in order, as AWS iterates an object")

	for _, c := range []struct {
		body  string
		cfg   interp.ReaderConfig
		cause string
	}{
		{"a,b\n", interp.ReaderConfig{InputType: "CSV", CSVHeaderLocation: "GIVEN", CSVHeaders: []string{"H", "H"}}, "CSV headers cannot contain duplicates."},
		{"a,a\n1,2\n", interp.ReaderConfig{InputType: "CSV"}, "CSV headers cannot contain duplicates."},
		{"1,2\n", interp.ReaderConfig{InputType: "CSV", CSVHeaderLocation: "GIVEN"}, "CSVHeaders must be given when CSVHeaderLocation is GIVEN."},
		{`"not an array"`, interp.ReaderConfig{InputType: "JSON"}, "Attempting to map over non-iterable node."},
		{`{"a": 1`, interp.ReaderConfig{InputType: "JSON"}, "Attempting to map over non-iterable node."},
		{"1\n{\n", interp.ReaderConfig{InputType: "JSONL"}, "Item #2 is not valid JSON."},
	} {
		_, err := Parse([]byte(c.body), &c.cfg)
		var fl *failure.Failure
		require.ErrorAs(t, err, &fl)
		require.Equal(t, failure.ItemReaderFailed, fl.Name)
		require.Equal(t, c.cause, fl.Cause)
	}
}

// FuzzParse: any body either parses into items or fails as
// States.ItemReaderFailed; it never panics.
func FuzzParse(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n"), "CSV")
	f.Add([]byte(`[1,2]`), "JSON")
	f.Add([]byte("1\n2\n"), "JSONL")
	f.Fuzz(func(t *testing.T, body []byte, typ string) {
		items, err := Parse(body, &interp.ReaderConfig{InputType: typ, MaxItems: 5})
		if err != nil {
			var fl *failure.Failure
			require.ErrorAs(t, err, &fl)
			require.Equal(t, failure.ItemReaderFailed, fl.Name)
			return
		}
		require.LessOrEqual(t, len(items), 5)
	})
}

// FuzzManifest: any manifest is read or refused as ItemReaderFailed, and
// what it names can be parsed (or refused) the same way.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"destinationBucket": "arn:aws:s3:::b", "fileFormat": "CSV", "fileSchema": "Bucket, Key", "files": [{"key": "k"}]}`), []byte("\"b\",\"k\"\n"))
	f.Add([]byte(`{"fileFormat": "ORC"}`), []byte{0x1f, 0x8b, 0})
	f.Fuzz(func(t *testing.T, manifest, data []byte) {
		m, err := ParseManifest(manifest)
		if err != nil {
			var fl *failure.Failure
			require.ErrorAs(t, err, &fl)
			require.Equal(t, failure.ItemReaderFailed, fl.Name)
			return
		}
		require.NotEmpty(t, m.Bucket)
		require.NotEmpty(t, m.Schema)
		items, err := m.ParseInventory(data, 3)
		if err != nil {
			var fl *failure.Failure
			require.ErrorAs(t, err, &fl)
			return
		}
		require.LessOrEqual(t, len(items), 3)
	})
}
