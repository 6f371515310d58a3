package dataflow

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
	"stepwise/asl/jsonpath"
	"stepwise/failure"
	"stepwise/jsonvalue"
)

func value(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonvalue.ParseString(s)
	require.NoError(t, err)
	return v
}

func path(s string) *asl.PathField { return &asl.PathField{Path: jsonpath.MustCompile(s)} }

func TestSelect(t *testing.T) {
	t.Parallel()
	in := value(t, `{"a": {"b": 1}}`)
	v, err := Select(nil, in, &jsonpath.Env{})
	require.NoError(t, err)
	require.Same(t, in.(*jsonvalue.Object), v.(*jsonvalue.Object))
	v, err = Select(&asl.PathField{Null: true}, in, &jsonpath.Env{})
	require.NoError(t, err)
	require.Equal(t, `{}`, jsonvalue.String(v))
	v, err = Select(path("$.a"), in, &jsonpath.Env{})
	require.NoError(t, err)
	require.Equal(t, `{"b":1}`, jsonvalue.String(v))
	_, err = Select(path("$.NoSuchOutputPath"), in, &jsonpath.Env{})
	require.Equal(t, failure.New(failure.Runtime,
		"Invalid path '$.NoSuchOutputPath' : No results for path: $['NoSuchOutputPath']"), err)
}

func TestMerge(t *testing.T) {
	t.Parallel()
	raw := value(t, `{"keep": true, "a": {"x": 1}}`)
	result := value(t, `[1, 2]`)
	v, err := Merge(nil, raw, result)
	require.NoError(t, err)
	require.Equal(t, `[1,2]`, jsonvalue.String(v))
	v, err = Merge(&asl.PathField{Null: true}, raw, result)
	require.NoError(t, err)
	require.Equal(t, `{"keep":true,"a":{"x":1}}`, jsonvalue.String(v))
	v, err = Merge(path("$.a.y"), raw, result)
	require.NoError(t, err)
	require.Equal(t, `{"keep":true,"a":{"x":1,"y":[1,2]}}`, jsonvalue.String(v))
	require.Equal(t, `{"keep":true,"a":{"x":1}}`, jsonvalue.String(raw), "the raw input is not changed")
	_, err = Merge(path("$.keep.deeper"), raw, result)
	fl, ok := err.(*failure.Failure)
	require.True(t, ok, "%T", err)
	require.Equal(t, failure.Runtime, fl.Name)
	require.Contains(t, fl.Cause, "Unable to apply ResultPath '$.keep.deeper'")
}
