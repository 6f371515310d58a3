package aliasrouting

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/store"
)

func TestRoundTrip(t *testing.T) {
	routes := []store.AliasRoute{{Version: 3, Weight: 90}, {Version: 1, Weight: 10}}
	text := Encode(routes)
	require.JSONEq(t, `[{"version":3,"weight":90},{"version":1,"weight":10}]`, text)
	got, err := Decode(text)
	require.NoError(t, err)
	require.Equal(t, routes, got)

	require.Equal(t, "[]", Encode(nil))
	got, err = Decode("[]")
	require.NoError(t, err)
	require.Nil(t, got)

	_, err = Decode("{")
	require.Error(t, err)
}
