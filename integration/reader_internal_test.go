package integration

import (
	"compress/gzip"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// objectStore is an S3 client of objects made as they are read.
type objectStore map[string]func() io.Reader

func (s objectStore) key(r *Request) string {
	p := r.Parameters.(*jsonvalue.Object)
	b, _ := p.Get("Bucket")
	k, _ := p.Get("Key")
	return b.(string) + "/" + k.(string)
}

func (s objectStore) OpenPayload(_ context.Context, r *Request) (io.ReadCloser, error) {
	open, ok := s[s.key(r)]
	if !ok {
		return nil, failure.New("S3.NoSuchKey", s.key(r))
	}
	body := open()
	if c, ok := body.(io.ReadCloser); ok {
		return c, nil
	}
	return io.NopCloser(body), nil
}

func (s objectStore) Call(_ context.Context, r *Request) (any, error) {
	out := jsonvalue.NewObject(1)
	if r.Action == "listObjectsV2" {
		var list []any
		for _, k := range []string{"daily/1.csv", "daily/2.csv"} {
			o := jsonvalue.NewObject(1)
			o.Set("Key", k)
			list = append(list, o)
		}
		out.Set("Contents", list)
	}
	return out, nil
}

// xs is n bytes of 'x' after prefix, made as they are read.
func xs(prefix string, n int64) io.Reader {
	return io.MultiReader(strings.NewReader(prefix), io.LimitReader(repeat('x'), n))
}

type repeat byte

func (c repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// compressed is r gzip-compressed as it is read; closing it stops the
// compression.
func compressed(r io.Reader) io.Reader {
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

// An item larger than 256 KiB fails the ItemReader with
// States.ItemReaderFailed naming the object and the line, whichever way
// the object is reached; a manifest is read at most 16 MiB. (Not
// parallel: it measures what the process allocates.)
func TestItemReaderItemTooLarge(t *testing.T) {
	store := objectStore{
		"data/big.csv":      func() io.Reader { return xs("id,name\n1,\"", 100<<20) },
		"data/big.jsonl":    func() io.Reader { return xs("{}\n{}\n\n", 100<<20) },
		"data/q1-manifest":  func() io.Reader { return strings.NewReader("s3://data/q1/part-0.gz\n") },
		"data/q1/part-0.gz": func() io.Reader { return compressed(xs("", 1<<30)) },
		"data/manifest.json": func() io.Reader {
			return strings.NewReader(`{"destinationBucket": "arn:aws:s3:::inv", "fileFormat": "CSV", "fileSchema": "Bucket, Key", "files": [{"key": "inv/data/1.csv.gz"}]}`)
		},
		"inv/inv/data/1.csv.gz": func() io.Reader { return compressed(xs("b,k\n", 1<<30)) },
		"data/daily/1.csv":      func() io.Reader { return strings.NewReader("a\n1\n") },
		"data/daily/2.csv":      func() io.Reader { return xs("a\n1\n2\n", 1<<20) },
		"data/huge-manifest":    func() io.Reader { return io.LimitReader(repeatLine("s3://data/q1/part-0.gz\n"), 1<<30) },
	}
	reg := &Registry{exact: map[string]*entry{
		"arn:aws:states:::aws-sdk:s3:getObject":     {impl: store},
		"arn:aws:states:::aws-sdk:s3:listObjectsV2": {impl: store},
	}}
	read := func(resource, params string, cfg interp.ReaderConfig) (int, error) {
		p, err := jsonvalue.ParseString(params)
		require.NoError(t, err)
		n := 0
		done := make(chan error, 1)
		go func() {
			done <- reg.StreamItems(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "reader",
				Request: &interp.TaskRequest{Resource: resource, Parameters: p, Reader: &cfg}}, func(items []any) error {
				n += len(items)
				return nil
			})
		}()
		select {
		case err := <-done:
			return n, err
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: still reading after 30s", params)
			return 0, nil
		}
	}
	const getObject = "arn:aws:states:::s3:getObject"
	for _, tc := range []struct {
		resource, params string
		cfg              interp.ReaderConfig
		cause            string
	}{
		{getObject, `{"Bucket": "data", "Key": "big.csv"}`, interp.ReaderConfig{InputType: "CSV"},
			"The item at line 2 of s3://data/big.csv is larger than 256 KiB, the most an item may be."},
		{getObject, `{"Bucket": "data", "Key": "big.jsonl"}`, interp.ReaderConfig{InputType: "JSONL"},
			"The item at line 4 of s3://data/big.jsonl is larger than 256 KiB, the most an item may be."},
		{getObject, `{"Bucket": "data", "Key": "q1-manifest"}`, interp.ReaderConfig{InputType: "CSV", ManifestType: "ATHENA_DATA"},
			"The item at line 1 of s3://data/q1/part-0.gz is larger than 256 KiB, the most an item may be."},
		{getObject, `{"Bucket": "data", "Key": "manifest.json"}`, interp.ReaderConfig{InputType: "MANIFEST"},
			"The item at line 2 of s3://inv/inv/data/1.csv.gz is larger than 256 KiB, the most an item may be."},
		{"arn:aws:states:::s3:listObjectsV2", `{"Bucket": "data", "Prefix": "daily/"}`, interp.ReaderConfig{InputType: "CSV", Transformation: "LOAD_AND_FLATTEN"},
			"The item at line 4 of s3://data/daily/2.csv is larger than 256 KiB, the most an item may be."},
		{getObject, `{"Bucket": "data", "Key": "huge-manifest"}`, interp.ReaderConfig{InputType: "CSV", ManifestType: "ATHENA_DATA"},
			"The manifest s3://data/huge-manifest is larger than 16 MiB, the most read of a manifest."},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := read(tc.resource, tc.params, tc.cfg)
		runtime.ReadMemStats(&after)
		var fl *failure.Failure
		require.ErrorAs(t, err, &fl, tc.params)
		require.Equal(t, failure.ItemReaderFailed, fl.Name, tc.params)
		require.Equal(t, tc.cause, fl.Cause, tc.params)
		// An item is read to 256 KiB, a manifest to 16 MiB (its buffer
		// doubling as it is read).
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(128<<20), "%s: allocated %d bytes", tc.params, after.TotalAlloc-before.TotalAlloc)
	}
}

// repeatLine is line again and again.
type repeatLine string

func (l repeatLine) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], l)
	}
	return n, nil
}
