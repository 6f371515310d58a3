package awsjson_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/awsjson"
	"stepwise/sfnapi"
)

// The API in process answers as the HTTP API does: the JSON of the
// answer, or an *Error with the code, the status and a request id; a
// body past the limit is refused as over HTTP.
func TestCall(t *testing.T) {
	t.Parallel()
	b := setup(t)
	api := awsjson.NewAPI(b.svc, awsjson.Options{})

	out, err := api.Call(b.ctx, "ListActivities", []byte(`{}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"activities":[]}`, string(out))
	require.Equal(t, http.StatusOK, awsjson.StatusOf(nil))

	_, err = api.Call(b.ctx, "DescribeActivity", []byte(`{"activityArn":"arn:aws:states:us-east-1:123456789012:activity:none"}`))
	var e *awsjson.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, sfnapi.CodeActivityDoesNotExist, e.Err.Code)
	require.Equal(t, http.StatusBadRequest, e.Status)
	require.Equal(t, http.StatusBadRequest, awsjson.StatusOf(err))
	require.NotEmpty(t, e.RequestID())

	_, err = api.Call(b.ctx, "Nope", []byte(`{}`))
	require.ErrorAs(t, err, &e)
	require.Equal(t, sfnapi.CodeUnknownOperation, e.Err.Code)

	big := append(append([]byte(`{"name":"`), bytes.Repeat([]byte("a"), awsjson.MaxBodySize)...), `"}`...)
	_, err = api.Call(b.ctx, "CreateActivity", big)
	require.ErrorAs(t, err, &e)
	require.Equal(t, sfnapi.CodeRequestEntityTooLarge, e.Err.Code)
	require.Equal(t, http.StatusRequestEntityTooLarge, awsjson.StatusOf(err))
}
