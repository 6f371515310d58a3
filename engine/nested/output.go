package nested

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"stepwise/history"
	"stepwise/jsonvalue"
	"stepwise/store"
)

// startOutput is the request-response result: StartExecution's response
// with the SDK's HTTP metadata, as AWS returns it.
func startOutput(row *store.Execution) *jsonvalue.Object {
	body := `{"executionArn":` + jsonvalue.String(row.Arn) + `,"startDate":` +
		strconv.FormatFloat(float64(row.StartDate.UnixMilli())/1000, 'f', -1, 64) + `}`
	out := jsonvalue.NewObject(4)
	out.Set("ExecutionArn", row.Arn)
	out.Set("SdkHttpMetadata", sdkHTTPMetadata(http.StatusOK, [][2]string{
		{"Content-Length", strconv.Itoa(len(body))},
		{"Content-Type", "application/x-amz-json-1.0"},
		{"Date", row.StartDate.UTC().Format(http.TimeFormat)},
	}, uuid.NewString()))
	out.Set("SdkResponseMetadata", sdkResponseMetadata(out))
	out.Set("StartDate", jsonvalue.NumberFromInt(row.StartDate.UnixMilli()))
	return out
}

// sdkHTTPMetadata is the SdkHttpMetadata member AWS adds to the results
// of optimized integrations: the response headers (x-amzn-RequestId
// first, then the others as given), once as lists and once as values in
// case-insensitive order, and the status code.
func sdkHTTPMetadata(status int, headers [][2]string, requestID string) *jsonvalue.Object {
	all := jsonvalue.NewObject(len(headers) + 1)
	single := jsonvalue.NewObject(len(headers) + 1)
	all.Set("x-amzn-RequestId", []any{requestID})
	for _, h := range headers {
		all.Set(h[0], []any{h[1]})
	}
	sorted := append([][2]string{{"x-amzn-RequestId", requestID}}, headers...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && strings.ToLower(sorted[j][0]) < strings.ToLower(sorted[j-1][0]); j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	for _, h := range sorted {
		single.Set(h[0], h[1])
	}
	md := jsonvalue.NewObject(3)
	md.Set("AllHttpHeaders", all)
	md.Set("HttpHeaders", single)
	md.Set("HttpStatusCode", jsonvalue.NumberFromInt(int64(status)))
	return md
}

// sdkResponseMetadata is {"RequestId": ...} of an output holding
// SdkHttpMetadata.
func sdkResponseMetadata(out *jsonvalue.Object) *jsonvalue.Object {
	id := ""
	if md, ok := out.Get("SdkHttpMetadata"); ok {
		if h, ok := md.(*jsonvalue.Object).Get("HttpHeaders"); ok {
			v, _ := h.(*jsonvalue.Object).Get("x-amzn-RequestId")
			id, _ = v.(string)
		}
	}
	m := jsonvalue.NewObject(1)
	m.Set("RequestId", id)
	return m
}

// describeForParent is the child's description as a .sync task returns
// it (and as the cause of its failure): DescribeExecution's members in
// PascalCase and alphabetical order, dates in epoch milliseconds; Input
// and Output as JSON text, or parsed for .sync:2. Output is there only
// for a child that succeeded.
func describeForParent(row *store.Execution, v2 bool) *jsonvalue.Object {
	text := func(s string) any {
		if !v2 {
			return s
		}
		v, err := jsonvalue.ParseString(s)
		if err != nil {
			return s
		}
		return v
	}
	included := jsonvalue.NewObject(1)
	included.Set("Included", true)
	d := jsonvalue.NewObject(12)
	if row.Cause != nil {
		d.Set("Cause", *row.Cause)
	}
	if row.Error != nil {
		d.Set("Error", *row.Error)
	}
	d.Set("ExecutionArn", row.Arn)
	d.Set("Input", text(row.Input))
	d.Set("InputDetails", included)
	d.Set("Name", row.Name)
	if row.Status == history.StatusSucceeded && row.Output != nil {
		d.Set("Output", text(*row.Output))
		d.Set("OutputDetails", included)
	}
	d.Set("StartDate", epochMillis(row.StartDate))
	d.Set("StateMachineArn", row.StateMachineArn)
	d.Set("Status", string(row.Status))
	if row.StopDate != nil {
		d.Set("StopDate", epochMillis(*row.StopDate))
	}
	return d
}

func epochMillis(t time.Time) jsonvalue.Number { return jsonvalue.NumberFromInt(t.UnixMilli()) }
