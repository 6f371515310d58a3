package frontdoor_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/frontdoor"
)

type position struct {
	After string `json:"a"`
	Time  int64  `json:"t,omitempty"`
}

// A token reads back for its list and scope only.
func TestPageToken(t *testing.T) {
	t.Parallel()
	token := frontdoor.PageToken("ex", "arn:sm|RUNNING", position{After: "arn:x", Time: 42})
	require.NotContains(t, token, "arn", "opaque")
	require.NotContains(t, token, "=")
	_, err := base64.RawURLEncoding.DecodeString(token) // safe in a URL's query, as the REST-JSON lists take it
	require.NoError(t, err)

	var pos position
	require.NoError(t, frontdoor.ReadPageToken(token, "ex", "arn:sm|RUNNING", &pos))
	require.Equal(t, position{After: "arn:x", Time: 42}, pos)

	require.ErrorIs(t, frontdoor.ReadPageToken(token, "ex", "arn:sm|", &pos), frontdoor.ErrOtherScope)
	require.ErrorIs(t, frontdoor.ReadPageToken(token, "ex", "arn:other|RUNNING", &pos), frontdoor.ErrOtherScope)
	require.ErrorIs(t, frontdoor.ReadPageToken(token, "sm", "arn:sm|RUNNING", &pos), frontdoor.ErrBadToken)
	for _, bad := range []string{"", "garbage!", base64.RawURLEncoding.EncodeToString([]byte(`["default","a1"]`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"k":"ex","s":"arn:sm|RUNNING"}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"k":"ex","s":"arn:sm|RUNNING","p":"a string"}`)),
		token + "x", strings.ToUpper(token)} {
		require.ErrorIs(t, frontdoor.ReadPageToken(bad, "ex", "arn:sm|RUNNING", &pos), frontdoor.ErrBadToken, bad)
	}
}
