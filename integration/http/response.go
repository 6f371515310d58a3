package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"stepwise/failure"
	"stepwise/internal/security/egress"
	"stepwise/jsonvalue"
)

// The errors of an HTTP Task.
const (
	// ErrorSocket fails a task whose request got no answer: the
	// connection failed, or the API did not answer in 60 seconds.
	ErrorSocket = "States.Http.Socket"
	// ErrorStatusCodePrefix, followed by the status code, fails a task
	// the API answered with a status outside 2xx.
	ErrorStatusCodePrefix = "States.Http.StatusCode."
)

// result is the task's result, as AWS shapes it:
//
//	{"Headers": {"Content-Type": ["application/json"], ...},
//	 "ResponseBody": <JSON if the response is JSON, else the text>,
//	 "StatusCode": 200, "StatusText": "OK"}
func result(resp *http.Response, body []byte) *jsonvalue.Object {
	out := jsonvalue.NewObject(4)
	out.Set("Headers", responseHeaders(resp.Header))
	out.Set("ResponseBody", responseBody(resp.Header.Get("Content-Type"), body))
	out.Set("StatusCode", jsonvalue.NumberFromInt(int64(resp.StatusCode)))
	out.Set("StatusText", statusText(resp))
	return out
}

// responseHeaders lists each header's values, headers sorted by name.
func responseHeaders(h http.Header) *jsonvalue.Object {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	sort.Strings(names)
	out := jsonvalue.NewObject(len(names))
	for _, name := range names {
		values := make([]any, len(h[name]))
		for i, v := range h[name] {
			values[i] = v
		}
		out.Set(name, values)
	}
	return out
}

// responseBody parses a JSON body (application/json or +json); any other
// body, or JSON that does not parse, is its text.
func responseBody(contentType string, body []byte) any {
	media, _, _ := mime.ParseMediaType(contentType)
	if media == "application/json" || strings.HasSuffix(media, "+json") {
		if v, err := jsonvalue.Parse(body); err == nil {
			return v
		}
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// statusText is the reason phrase the API sent, or the standard one.
func statusText(resp *http.Response) string {
	if text := strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode))); text != "" {
		return text
	}
	return http.StatusText(resp.StatusCode)
}

// statusFailure fails a task answered with a status outside 2xx; the
// cause is the response, shaped as the result would be, as JSON text.
func statusFailure(status int, out *jsonvalue.Object) error {
	return failure.New(ErrorStatusCodePrefix+strconv.Itoa(status), jsonvalue.String(out))
}

// errSocketTimeout is the cause of the context of a request that got no
// answer in time.
var errSocketTimeout = errors.New("the HTTP Task got no answer in time")

// transportFailure is the failure of a request that got no (whole)
// answer. When the caller gave up (the task timed out or was stopped),
// nobody wants the result and ctx's error is returned as it is.
func (inv *invoker) transportFailure(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errSocketTimeout) {
		return failure.Newf(ErrorSocket, "The API did not answer within %v", inv.timeout)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("http task: %w", ctx.Err())
	}
	var refused *egress.RefusedError
	if errors.As(err, &refused) {
		return refusal(refused)
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	return failure.New(ErrorSocket, err.Error())
}

// refusal fails a task whose endpoint, or a redirect's, is one HTTP
// Tasks may not call, as AWS fails one it cannot reach.
func refusal(err error) error {
	return failure.New(ErrorSocket, err.Error())
}

// readBody reads a response body of at most the payload limit; a larger one
// fails the task with States.DataLimitExceeded.
func (inv *invoker) readBody(ctx context.Context, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(inv.limit)+1))
	if err != nil {
		return nil, inv.transportFailure(ctx, err)
	}
	if len(data) > inv.limit {
		return nil, failure.Newf(failure.DataLimitExceeded,
			"The HTTP response body is larger than the payload size quota of %d bytes", inv.limit)
	}
	return data, nil
}
