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
		base64.RawURLEncoding.EncodeToString([]byte(`{"k":"ex","s":"arn:sm|RUNNING","t":"a string"}`)),
		token + "x", strings.ToUpper(token)} {
		require.ErrorIs(t, frontdoor.ReadPageToken(bad, "ex", "arn:sm|RUNNING", &pos), frontdoor.ErrBadToken, bad)
	}
}

// A token is one flat JSON object, the kind and scope beside the
// position's members: the form Step Functions' tokens had before the
// front door wrote them, so that a token given out before an upgrade
// still pages on.
func TestPageTokenForm(t *testing.T) {
	t.Parallel()
	token := frontdoor.PageToken("ex", "arn:sm|RUNNING", position{After: "arn:x", Time: 42})
	b, err := base64.RawURLEncoding.DecodeString(token)
	require.NoError(t, err)
	require.JSONEq(t, `{"k":"ex","s":"arn:sm|RUNNING","a":"arn:x","t":42}`, string(b))

	var pos position
	require.NoError(t, frontdoor.ReadPageToken(frontdoor.PageToken("ex", "", position{}), "ex", "", &pos))
	require.Equal(t, position{}, pos)
	require.Panics(t, func() { frontdoor.PageToken("ex", "", []string{"a"}) }, "a position is an object")
}
