package itemreader

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

func TestParseAthenaManifest(t *testing.T) {
	files, err := ParseAthenaManifest([]byte("\ufeffs3://results/unload/q1/20250901_000001_00007_abcde_1\r\n\ns3://other/x/y.gz\n"))
	require.NoError(t, err)
	require.Equal(t, []AthenaFile{{"results", "unload/q1/20250901_000001_00007_abcde_1"}, {"other", "x/y.gz"}}, files)

	files, err = ParseAthenaManifest(nil)
	require.NoError(t, err)
	require.Empty(t, files, "a query without rows names no files")

	for _, body := range []string{"results/key\n", "s3://bucket\n", "s3:///key\n", "s3://b/k\nhttps://b/k\n"} {
		_, err := ParseAthenaManifest([]byte(body))
		var fl *failure.Failure
		require.ErrorAs(t, err, &fl, body)
		require.Equal(t, failure.ItemReaderFailed, fl.Name)
		require.Contains(t, fl.Cause, "The Athena data manifest is not valid: line ")
	}
}

func TestAthenaDataFiles(t *testing.T) {
	read := func(body []byte, cfg interp.ReaderConfig) (string, error) {
		var items []any
		err := StreamAthenaFile(bytes.NewReader(body), &cfg, func(b []any) error {
			items = append(items, b...)
			return nil
		})
		return jsonvalue.String(items), err
	}
	got, err := read(gz(t, []byte("{\"a\":1}\n{\"a\":2}\n")), interp.ReaderConfig{InputType: "JSONL"})
	require.NoError(t, err)
	require.Equal(t, `[{"a":1},{"a":2}]`, got, "UNLOAD's gzip-compressed JSON is decompressed")
	got, err = read([]byte("x,y\n1,2\n3,4\n"), interp.ReaderConfig{InputType: "CSV", MaxItems: 1})
	require.NoError(t, err)
	require.Equal(t, `[{"x":"1","y":"2"}]`, got)
	got, err = read(parquetFile(t, sensorRows(2), 0), interp.ReaderConfig{InputType: "PARQUET"})
	require.NoError(t, err)
	require.Contains(t, got, `"sensor":"sb"`)

	_, err = read([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1, 2, 3}, interp.ReaderConfig{InputType: "JSONL"})
	var fl *failure.Failure
	require.ErrorAs(t, err, &fl)
	require.Contains(t, fl.Cause, "A data file of the Athena manifest could not be decompressed")

	require.NoError(t, CheckAthena(&interp.ReaderConfig{InputType: "PARQUET"}))
	err = CheckAthena(&interp.ReaderConfig{InputType: "JSON"})
	require.ErrorAs(t, err, &fl)
	require.Equal(t, "The input type JSON is not supported with ManifestType ATHENA_DATA: the data files must be CSV, JSONL or PARQUET.", fl.Cause)
}

// FuzzAthenaManifest: any manifest is read into s3:// locations with a
// bucket and a key, or refused as States.ItemReaderFailed; and any data
// file is read as its InputType says or refused the same way.
func FuzzAthenaManifest(f *testing.F) {
	f.Add([]byte("s3://b/k1\ns3://b/k2\n"), []byte("{\"a\":1}\n"), uint8(1))
	f.Add([]byte("s3://b\n"), []byte("a,b\n1,2\n"), uint8(0))
	f.Add([]byte(""), []byte{0x1f, 0x8b, 0}, uint8(1))
	f.Add([]byte("s3://b/k\n"), []byte("PAR1PAR1"), uint8(2))
	f.Fuzz(func(t *testing.T, manifest, data []byte, typ uint8) {
		files, err := ParseAthenaManifest(manifest)
		if err != nil {
			var fl *failure.Failure
			require.ErrorAs(t, err, &fl)
			require.Equal(t, failure.ItemReaderFailed, fl.Name)
		}
		for _, f := range files {
			require.NotEmpty(t, f.Bucket)
			require.NotEmpty(t, f.Key)
		}
		if len(data) > 1<<16 {
			return
		}
		cfg := interp.ReaderConfig{InputType: AthenaInputTypes[int(typ)%len(AthenaInputTypes)], MaxItems: 3}
		n := 0
		err = StreamAthenaFile(bytes.NewReader(data), &cfg, func(items []any) error {
			n += len(items)
			return nil
		})
		if err != nil {
			var fl *failure.Failure
			require.ErrorAs(t, err, &fl)
			require.Equal(t, failure.ItemReaderFailed, fl.Name)
			return
		}
		require.LessOrEqual(t, n, 3)
	})
}
