package awssdk_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/integrationtest"
	"stepwise/integration/itemreader"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// readerTask is the task of a Map state's ItemReader.
func readerTask(t *testing.T, resource, params string, cfg interp.ReaderConfig) *task.Task {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	require.NoError(t, err)
	return &task.Task{ExecutionArn: "arn:x", ID: "reader", Request: &interp.TaskRequest{Resource: resource, Parameters: p, Reader: &cfg}}
}

// streamed is what StreamItems hands over: the batches' sizes and all
// their items, or its error.
type streamed struct {
	sizes []int
	items []any
	err   error
}

func streamItems(t *testing.T, reg *integration.Registry, tk *task.Task) streamed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var s streamed
	s.err = reg.StreamItems(ctx, tk, func(items []any) error {
		s.sizes = append(s.sizes, len(items))
		s.items = append(s.items, items...)
		return nil
	})
	return s
}

// run is the answer of the registry's ReadItems to the same task.
func run(t *testing.T, reg *integration.Registry, tk *task.Task) task.Result {
	t.Helper()
	ch := make(chan task.Result, 1)
	reg.ReadItems(context.Background(), tk, func(r task.Result) { ch <- r })
	select {
	case r := <-ch:
		return r
	case <-time.After(time.Minute):
		t.Fatal("no answer")
		return task.Result{}
	}
}

// requestIDs are the parts of a cause that differ from call to call.
var requestIDs = regexp.MustCompile(`(Request ID|Extended Request ID): [^,)]+`)

func sameFailure(t *testing.T, want *failure.Failure, got error) {
	t.Helper()
	var fl *failure.Failure
	require.ErrorAs(t, got, &fl)
	require.Equal(t, want.Name, fl.Name)
	require.Equal(t, requestIDs.ReplaceAllString(want.Cause, "$1: …"), requestIDs.ReplaceAllString(fl.Cause, "$1: …"))
}

// StreamItems reads what readItems reads, a batch of at most 1000 items
// at a time, and fails as it fails.
func TestStreamItemsOnMoto(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	b := setup(t, moto)
	b.ok(t, "s3", "createBucket", `{"Bucket": "items"}`)
	putRaw := func(key string, body []byte) {
		req, err := http.NewRequest(http.MethodPut, moto+"/items/"+key, bytes.NewReader(body))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	var csv, jsonl, inv bytes.Buffer
	csv.WriteString("\ufeffid,name\n")
	json := []string{}
	for i := range 2500 {
		fmt.Fprintf(&csv, "%d,n%d\r\n", i, i)
		fmt.Fprintf(&jsonl, "{\"i\": %d, \"big\": 1234567890123456789012345678901234567890}\n", i)
		fmt.Fprintf(&inv, "\"items\",\"k%d\"\n", i)
		json = append(json, fmt.Sprintf(`{"i": %d, "f": 1.10}`, i))
	}
	putRaw("rows.csv", csv.Bytes())
	putRaw("rows.jsonl", jsonl.Bytes())
	putRaw("rows.json", []byte("["+strings.Join(json, ",\n")+"]"))
	putRaw("bad.json", []byte("["+strings.Join(json, ",\n")+",]"))
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write(inv.Bytes())
	require.NoError(t, zw.Close())
	putRaw("inv/a.csv.gz", zipped.Bytes())
	putRaw("inv/b.csv", []byte("\"items\",\"last\"\n"))
	putRaw("manifest.json", []byte(`{"destinationBucket": "arn:aws:s3:::items", "fileFormat": "CSV", "fileSchema": "Bucket, Key",
		"files": [{"key": "inv/a.csv.gz"}, {"key": "inv/b.csv"}]}`))
	for i := range 5 {
		b.ok(t, "s3", "putObject", fmt.Sprintf(`{"Bucket": "items", "Key": "dir/%d.json", "Body": "{}"}`, i))
	}
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoint: moto})
	require.NoError(t, err)

	const getObject, list = "arn:aws:states:::s3:getObject", "arn:aws:states:::s3:listObjectsV2"
	for _, c := range []struct {
		name, resource, params string
		cfg                    interp.ReaderConfig
		sizes                  []int
		last                   string
	}{
		{"CSV", getObject, `{"Bucket": "items", "Key": "rows.csv"}`, interp.ReaderConfig{InputType: "CSV"},
			[]int{1000, 1000, 500}, `{"id":"2499","name":"n2499"}`},
		{"CSV MaxItems", "arn:aws-cn:states:::s3:getObject", `{"Bucket": "items", "Key": "rows.csv"}`, interp.ReaderConfig{InputType: "CSV", MaxItems: 2100},
			[]int{1000, 1000, 100}, `{"id":"2099","name":"n2099"}`},
		{"CSV GIVEN", getObject, `{"Bucket": "items", "Key": "rows.csv"}`,
			interp.ReaderConfig{InputType: "CSV", CSVHeaderLocation: "GIVEN", CSVHeaders: []string{"a", "b", "c"}, MaxItems: 1001},
			[]int{1000, 1}, `{"a":"999","b":"n999","c":""}`},
		{"JSON", getObject, `{"Bucket": "items", "Key": "rows.json"}`, interp.ReaderConfig{InputType: "JSON", MaxItems: 1200},
			[]int{1000, 200}, `{"i":1199,"f":1.10}`},
		{"JSONL", getObject, `{"Bucket": "items", "Key": "rows.jsonl"}`, interp.ReaderConfig{InputType: "JSONL"},
			[]int{1000, 1000, 500}, `{"i":2499,"big":1234567890123456789012345678901234567890}`},
		{"MANIFEST", getObject, `{"Bucket": "items", "Key": "manifest.json"}`, interp.ReaderConfig{InputType: "MANIFEST"},
			[]int{1000, 1000, 500, 1}, `{"Bucket":"items","Key":"last"}`},
		{"MANIFEST MaxItems", getObject, `{"Bucket": "items", "Key": "manifest.json"}`, interp.ReaderConfig{InputType: "MANIFEST", MaxItems: 2500},
			[]int{1000, 1000, 500}, `{"Bucket":"items","Key":"k2499"}`},
		{"listObjectsV2", list, `{"Bucket": "items", "Prefix": "dir/", "MaxKeys": 2}`, interp.ReaderConfig{},
			[]int{2, 2, 1}, ""},
		{"listObjectsV2 MaxItems", list, `{"Bucket": "items", "Prefix": "dir/", "MaxKeys": 2}`, interp.ReaderConfig{MaxItems: 3},
			[]int{2, 1}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tk := readerTask(t, c.resource, c.params, c.cfg)
			s := streamItems(t, reg, tk)
			require.NoError(t, s.err)
			require.Equal(t, c.sizes, s.sizes)
			if c.last != "" {
				require.Equal(t, c.last, jsonvalue.String(s.items[len(s.items)-1]))
			}
			res := run(t, reg, tk)
			require.Nil(t, res.Failure)
			require.Equal(t, jsonvalue.String(res.Output), jsonvalue.String(s.items), "ReadItems answers with what StreamItems hands over")
		})
	}
	s := streamItems(t, reg, readerTask(t, list, `{"Bucket": "items", "Prefix": "dir/", "MaxKeys": 2}`, interp.ReaderConfig{}))
	var keys []string
	for _, it := range s.items {
		k, _ := it.(*jsonvalue.Object).Get("Key")
		keys = append(keys, k.(string))
	}
	require.Equal(t, "dir/0.json dir/1.json dir/2.json dir/3.json dir/4.json", strings.Join(keys, " "))

	// Failures: those of getObject, and of the data.
	_, missing := b.call(t, "s3", "getObject", `{"Bucket": "items", "Key": "missing.csv"}`)
	require.Equal(t, "S3.NoSuchKeyException", missing.Name)
	_, noBucket := b.call(t, "s3", "getObject", `{"Bucket": "nobucket", "Key": "x"}`)
	for _, c := range []struct {
		params string
		cfg    interp.ReaderConfig
		want   *failure.Failure
	}{
		{`{"Bucket": "items", "Key": "missing.csv"}`, interp.ReaderConfig{InputType: "CSV"}, missing},
		{`{"Bucket": "nobucket", "Key": "x"}`, interp.ReaderConfig{InputType: "JSON"}, noBucket},
		{`{"Bucket": "items", "Key": "bad.json"}`, interp.ReaderConfig{InputType: "JSON", MaxItems: 2},
			failure.New(failure.ItemReaderFailed, "Attempting to map over non-iterable node.")},
		{`{"Bucket": "items", "Key": "rows.csv"}`, interp.ReaderConfig{InputType: "XML"},
			failure.New(failure.ItemReaderFailed, "The input type XML is not supported.")},
		{`{"Bucket": "items", "Key": "rows.csv"}`, interp.ReaderConfig{InputType: "MANIFEST"},
			failure.New(failure.ItemReaderFailed, "The manifest is not an S3 inventory manifest: it is not a JSON object.")},
	} {
		tk := readerTask(t, getObject, c.params, c.cfg)
		s := streamItems(t, reg, tk)
		sameFailure(t, c.want, s.err)
		res := run(t, reg, tk)
		require.NotNil(t, res.Failure)
		sameFailure(t, c.want, res.Failure)
	}
	s = streamItems(t, reg, readerTask(t, "arn:aws:states:::s3:putObject", `{}`, interp.ReaderConfig{}))
	sameFailure(t, failure.New(failure.ItemReaderFailed, "The resource 'arn:aws:states:::s3:putObject' cannot read items."), s.err)

	// emit's error stops the read and is returned as it is.
	stop := errors.New("stop")
	calls := 0
	err = reg.StreamItems(context.Background(), readerTask(t, getObject, `{"Bucket": "items", "Key": "rows.csv"}`, interp.ReaderConfig{InputType: "CSV"}),
		func([]any) error { calls++; return stop })
	require.Same(t, stop, err)
	require.Equal(t, 1, calls)
}

// OpenPayload hands over S3 GetObject's Body as it arrives, and fails as
// Call fails.
func TestOpenPayload(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	b := setup(t, moto)
	b.ok(t, "s3", "createBucket", `{"Bucket": "files"}`)
	b.ok(t, "s3", "putObject", `{"Bucket": "files", "Key": "dir/a b+c.txt", "Body": "text data"}`)
	open := func(b *testBundle, action, params string) (io.ReadCloser, error) {
		p, err := jsonvalue.ParseString(params)
		require.NoError(t, err)
		return b.client.OpenPayload(context.Background(), &integration.Request{Service: "aws-sdk:s3", Action: action, Parameters: p})
	}
	body, err := open(b, "getObject", `{"Bucket": "files", "Key": "dir/a b+c.txt"}`)
	require.NoError(t, err)
	data, err := io.ReadAll(body)
	require.NoError(t, err)
	require.NoError(t, body.Close())
	require.Equal(t, `"text data"`, string(data))

	for _, params := range []string{`{"Bucket": "files", "Key": "nope"}`, `{"Bucket": "nobucket", "Key": "nope"}`, `{"Bucket": "files"}`} {
		_, want := b.call(t, "s3", "getObject", params)
		require.NotNil(t, want)
		_, err := open(b, "getObject", params)
		sameFailure(t, want, err)
	}
	_, err = open(b, "listObjectsV2", `{"Bucket": "files"}`)
	require.ErrorContains(t, err, "no payload")

	// Throttled, then answered: tried again as Call is. Cut short: the
	// failure Call fails with when it cannot read the answer.
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/b/retry" && calls.Add(1) == 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.URL.Path == "/b/cut":
			w.Header().Set("Content-Length", "100")
			_, _ = w.Write([]byte("only ten b"))
		default:
			_, _ = w.Write([]byte("whole"))
		}
	}))
	t.Cleanup(srv.Close)
	local := setup(t, srv.URL)
	body, err = open(local, "getObject", `{"Bucket": "b", "Key": "retry"}`)
	require.NoError(t, err)
	data, _ = io.ReadAll(body)
	body.Close()
	require.Equal(t, "whole", string(data))
	require.EqualValues(t, 2, calls.Load())

	_, want := local.call(t, "s3", "getObject", `{"Bucket": "b", "Key": "cut"}`)
	require.Equal(t, "S3.SdkClientException", want.Name)
	body, err = open(local, "getObject", `{"Bucket": "b", "Key": "cut"}`)
	require.NoError(t, err)
	_, err = io.ReadAll(body)
	body.Close()
	sameFailure(t, want, err)
}

// A large object is read with the heap bounded by a batch, not by the
// object: 50 MB of CSV from an S3 stand-in, the batches dropped as they
// come.
func TestStreamItemsHeapBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 50 MB")
	}
	const (
		rows   = 500_000
		rowLen = 105
		header = "id,name,payload\n"
	)
	payload := strings.Repeat("x", rowLen-len("00000000,name-00000000,\n"))
	size := len(header) + rows*rowLen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/big/rows.csv" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>`))
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(size))
		bw := bufio.NewWriterSize(w, 64*1024)
		_, _ = bw.WriteString(header)
		for i := range rows {
			_, _ = fmt.Fprintf(bw, "%08d,name-%08d,%s\n", i, i, payload)
		}
		_ = bw.Flush()
	}))
	t.Cleanup(srv.Close)
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoint: srv.URL})
	require.NoError(t, err)

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	baseHeap, baseAlloc := ms.HeapInuse, ms.TotalAlloc
	var peak uint64
	n, batches := 0, 0
	var last any
	err = reg.StreamItems(context.Background(), readerTask(t, "arn:aws:states:::s3:getObject", `{"Bucket": "big", "Key": "rows.csv"}`,
		interp.ReaderConfig{InputType: "CSV"}), func(items []any) error {
		require.LessOrEqual(t, len(items), itemreader.BatchSize)
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
	require.Equal(t, fmt.Sprintf(`{"id":"%08d","name":"name-%08d","payload":"%s"}`, rows-1, rows-1, payload), jsonvalue.String(last))
	runtime.ReadMemStats(&ms)
	growth := int64(peak) - int64(baseHeap)
	t.Logf("object %d MB; heap in use grew by at most %.1f MB; %.0f MB allocated in all", size>>20, float64(growth)/(1<<20), float64(ms.TotalAlloc-baseAlloc)/(1<<20))
	require.Less(t, growth, int64(size/5), "the heap grew with the object")
}
