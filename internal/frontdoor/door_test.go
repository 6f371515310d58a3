package frontdoor_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/frontdoor"
)

// apiError is the toy API's own error.
type apiError struct {
	code   string
	status int
}

func (e *apiError) Error() string { return e.code }

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.String()
}

type testBundle struct {
	door *frontdoor.Door
	logs *syncBuffer
}

// setup is a door of a toy API in shape, with a body limit of 16 bytes.
func setup(t *testing.T, shape frontdoor.Shape) *testBundle {
	t.Helper()
	logs := &syncBuffer{}
	door := &frontdoor.Door{
		Name:  "toy",
		Log:   slog.New(slog.NewTextHandler(logs, nil)),
		Shape: shape,
		Limit: 16,
		Answer: func(err error) (frontdoor.Failure, bool) {
			var e *apiError
			if !errors.As(err, &e) {
				return frontdoor.Failure{}, false
			}
			return frontdoor.Failure{Status: e.status, Code: e.code, Message: "the toy says " + e.code}, true
		},
		Internal: func(reqID string) frontdoor.Failure {
			return frontdoor.Failure{Status: 500, Code: "InternalFailure", Message: "internal (" + reqID + ")"}
		},
		TooLarge:   func(limit int64) error { return &apiError{code: fmt.Sprintf("TooLarge%d", limit), status: 413} },
		Unreadable: func(err error) error { return &apiError{code: "Unreadable", status: 400} },
		Attrs:      func(r *http.Request) []any { return []any{"path", r.URL.Path} },
	}
	return &testBundle{door: door, logs: logs}
}

// toy is the toy API: /ok answers, /api fails with its own error,
// /internal with another, /panic panics, /body echoes the body.
func (b *testBundle) toy(w http.ResponseWriter, r *http.Request) error {
	switch r.URL.Path {
	case "/ok":
		return frontdoor.WriteJSON(w, http.StatusOK, frontdoor.ContentTypeRESTJSON, map[string]string{"id": frontdoor.RequestID(r.Context())})
	case "/api":
		return &apiError{code: "NotThere", status: 404}
	case "/internal":
		return errors.New("disk on fire")
	case "/panic":
		panic("the toy exploded")
	case "/body":
		body, err := b.door.ReadBody(r)
		if err != nil {
			return err
		}
		return frontdoor.WriteJSON(w, http.StatusOK, frontdoor.ContentTypeRESTJSON, map[string]string{"body": string(body)})
	}
	return &apiError{code: "NoRoute", status: 404}
}

func (b *testBundle) serve(method, path string, body io.Reader) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	b.door.Serve(rec, httptest.NewRequest(method, path, body), b.toy)
	return rec
}

var json10 = frontdoor.JSON10{TypeOf: func(code string) string { return "com.example#" + code }}

// Every answer carries a request id of its own, whatever it is, and the
// operation sees it in its context.
func TestServeRequestIDOnEveryAnswer(t *testing.T) {
	t.Parallel()
	b := setup(t, frontdoor.RESTJSON{})
	seen := map[string]bool{}
	for _, path := range []string{"/ok", "/api", "/internal", "/panic", "/nowhere"} {
		rec := b.serve(http.MethodGet, path, nil)
		id := rec.Header().Get(frontdoor.RequestIDHeader)
		require.Len(t, id, 36, path)
		require.False(t, seen[id], path)
		seen[id] = true
		if path == "/ok" {
			require.JSONEq(t, `{"id":"`+id+`"}`, rec.Body.String())
		}
	}
	rec := httptest.NewRecorder()
	b.door.Refuse(rec, frontdoor.Failure{Status: 403, Code: "AccessDeniedException", Message: "no"})
	require.Len(t, rec.Header().Get(frontdoor.RequestIDHeader), 36)
	require.Equal(t, 403, rec.Code)

	// Fail outside Serve (a gate before the API) gives its answer an id.
	rec = httptest.NewRecorder()
	require.Equal(t, 404, b.door.Fail(rec, httptest.NewRequest(http.MethodGet, "/", nil), &apiError{code: "X", status: 404}))
	require.Len(t, rec.Header().Get(frontdoor.RequestIDHeader), 36)
}

// The API's own errors are written as it words them; any other is an
// internal failure, logged, and the client is told only the request id.
func TestServeErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, json10)
	rec := b.serve(http.MethodGet, "/api", nil)
	require.Equal(t, 404, rec.Code)
	require.Equal(t, frontdoor.ContentTypeJSON10, rec.Header().Get("Content-Type"))
	require.JSONEq(t, `{"__type":"com.example#NotThere","message":"the toy says NotThere"}`, rec.Body.String())
	require.Empty(t, b.logs.String())

	rec = b.serve(http.MethodGet, "/internal", nil)
	id := rec.Header().Get(frontdoor.RequestIDHeader)
	require.Equal(t, 500, rec.Code)
	require.JSONEq(t, `{"__type":"com.example#InternalFailure","message":"internal (`+id+`)"}`, rec.Body.String())
	logs := b.logs.String()
	require.Contains(t, logs, `msg="toy: internal failure" path=/internal request_id=`+id+` error="disk on fire"`)
	require.Contains(t, logs, `msg="toy: server error" path=/internal request_id=`+id+` status=500`)
}

// A panic of the API is a 500 in its shape, logged with its stack, and
// the door goes on serving; http.ErrAbortHandler is net/http's.
func TestServeRecoversPanics(t *testing.T) {
	t.Parallel()
	for name, shape := range map[string]frontdoor.Shape{"JSON10": json10, "RESTJSON": frontdoor.RESTJSON{}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, shape)
			rec := b.serve(http.MethodGet, "/panic", nil)
			id := rec.Header().Get(frontdoor.RequestIDHeader)
			require.Equal(t, http.StatusInternalServerError, rec.Code)
			if name == "JSON10" {
				require.JSONEq(t, `{"__type":"com.example#InternalFailure","message":"internal (`+id+`)"}`, rec.Body.String())
			} else {
				require.Equal(t, "InternalFailure", rec.Header().Get("X-Amzn-ErrorType"))
				require.JSONEq(t, `{"Message":"internal (`+id+`)"}`, rec.Body.String())
			}
			require.NotContains(t, rec.Body.String(), "exploded")
			logs := b.logs.String()
			require.Contains(t, logs, `msg="toy: panic" path=/panic request_id=`+id+` panic="the toy exploded"`)
			require.Contains(t, logs, "frontdoor_test.(*testBundle).toy") // the stack

			require.Equal(t, http.StatusOK, b.serve(http.MethodGet, "/ok", nil).Code)
		})
	}
	b := setup(t, json10)
	require.PanicsWithValue(t, http.ErrAbortHandler, func() {
		b.door.Serve(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), func(http.ResponseWriter, *http.Request) error {
			panic(http.ErrAbortHandler)
		})
	})
}

// failingReader fails the test if it is read.
type failingReader struct{ t *testing.T }

func (r failingReader) Read([]byte) (int, error) {
	r.t.Error("the body was read")
	return 0, io.ErrUnexpectedEOF
}

// A body up to the limit is read; past it, it is the API's TooLarge,
// read no further than the limit, and not at all when its length says
// so; a body a gate read is given as it was.
func TestReadBody(t *testing.T) {
	t.Parallel()
	b := setup(t, frontdoor.RESTJSON{})
	rec := b.serve(http.MethodPost, "/body", strings.NewReader("0123456789abcdef"))
	require.Equal(t, http.StatusOK, rec.Code)
	require.JSONEq(t, `{"body":"0123456789abcdef"}`, rec.Body.String())

	rec = b.serve(http.MethodPost, "/body", strings.NewReader("0123456789abcdefg"))
	require.Equal(t, 413, rec.Code)
	require.Equal(t, "TooLarge16", rec.Header().Get("X-Amzn-ErrorType"))

	// Chunked (no length): read up to the limit and one byte, no more.
	r := httptest.NewRequest(http.MethodPost, "/body", io.MultiReader(strings.NewReader(strings.Repeat("x", 17)), failingReader{t}))
	r.ContentLength = -1
	_, err := b.door.ReadBody(r)
	var e *apiError
	require.ErrorAs(t, err, &e)
	require.Equal(t, "TooLarge16", e.code)

	r = httptest.NewRequest(http.MethodPost, "/body", failingReader{t})
	r.ContentLength = 17
	_, err = b.door.ReadBody(r)
	require.ErrorAs(t, err, &e)
	require.Equal(t, "TooLarge16", e.code)

	r = httptest.NewRequest(http.MethodPost, "/body", failingReader{t})
	got, err := b.door.ReadBody(frontdoor.WithBody(r, []byte("read before")))
	require.NoError(t, err)
	require.Equal(t, "read before", string(got))

	r = httptest.NewRequest(http.MethodPost, "/body", io.MultiReader(strings.NewReader("ab"), errorReader{}))
	r.ContentLength = -1
	_, err = b.door.ReadBody(r)
	require.ErrorAs(t, err, &e)
	require.Equal(t, "Unreadable", e.code)
}

type errorReader struct{}

func (errorReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestShapes(t *testing.T) {
	t.Parallel()
	f := frontdoor.Failure{Status: 400, Code: "ValidationException", Message: "name <a\xed\xa0\x80> & more"}
	rec := httptest.NewRecorder()
	require.NoError(t, json10.WriteFailure(rec, f))
	require.Equal(t, 400, rec.Code)
	require.Equal(t, "application/x-amz-json-1.0", rec.Header().Get("Content-Type"))
	require.Equal(t, `{"__type":"com.example#ValidationException","message":"name <a\ud800> & more"}`, rec.Body.String())
	body, err := json10.Encode(f)
	require.NoError(t, err)
	require.Equal(t, rec.Body.String(), string(body))

	rec = httptest.NewRecorder()
	require.NoError(t, frontdoor.RESTJSON{}.WriteFailure(rec, f))
	require.Equal(t, 400, rec.Code)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	require.Equal(t, "ValidationException", rec.Header().Get("x-amzn-ErrorType"))
	require.Equal(t, `{"Message":"name <a\ud800> & more"}`, rec.Body.String())

	rec = httptest.NewRecorder()
	require.Error(t, frontdoor.WriteJSON(rec, 200, frontdoor.ContentTypeRESTJSON, map[string]any{"f": func() {}}))
	require.Empty(t, rec.Body.String()) // nothing written: the door can still answer the error
}

func TestText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text string
		want string
	}{
		{"plain <b> & é", `"plain <b> & é"`},
		{"Invalid Name: 'a\xed\xa0\x80'", `"Invalid Name: 'a\ud800'"`},
		{"\xed\xbf\xbf\xed\xa0\x80x\"", `"\udfff\ud800x\""`},
		{"\xff", `"\ufffd"`}, // other invalid UTF-8 as encoding/json writes it
	} {
		got, err := frontdoor.Text(tt.text).MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, tt.want, string(got), tt.text)
		require.True(t, json.Valid(got))
	}
}

type appended struct{ A string }

func (a appended) AppendJSON(dst []byte) []byte { return append(dst, `{"by":"hand"}`...) }

// An answer that writes itself out (JSONAppender) is written as it
// appends itself; the others through encoding/json.
func TestWriteJSONAppender(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    any
		want string
	}{{appended{A: "x"}, `{"by":"hand"}`}, {struct{ A string }{"<x>"}, `{"A":"<x>"}`}} {
		for range 2 { // the second from a pooled buffer
			w := httptest.NewRecorder()
			require.NoError(t, frontdoor.WriteJSON(w, 201, "application/x-amz-json-1.0", c.v))
			require.Equal(t, 201, w.Code)
			require.Equal(t, "application/x-amz-json-1.0", w.Header().Get("Content-Type"))
			require.Equal(t, c.want, w.Body.String())
		}
	}
}
