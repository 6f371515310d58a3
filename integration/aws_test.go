package integration_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/jsonvalue"
)

type attr struct {
	dataType, value *string
	binary          []byte
}

func TestMessageAttributes(t *testing.T) {
	t.Parallel()
	mk := func(d, s *string, b []byte) attr { return attr{d, s, b} }
	params := func(text string) *jsonvalue.Object {
		v, err := jsonvalue.Parse([]byte(text))
		require.NoError(t, err)
		return v.(*jsonvalue.Object)
	}
	got, err := integration.MessageAttributes(params(`{"MessageAttributes":{"color":{"DataType":"String","StringValue":"red"},"blob":{"DataType":"Binary","BinaryValue":"aGk="}}}`), mk)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "String", *got["color"].dataType)
	require.Equal(t, "red", *got["color"].value)
	require.Nil(t, got["color"].binary)
	require.Equal(t, []byte("hi"), got["blob"].binary)
	require.Nil(t, got["blob"].value)

	none, err := integration.MessageAttributes(params(`{"MessageBody":"x"}`), mk)
	require.NoError(t, err)
	require.Nil(t, none)

	_, err = integration.MessageAttributes(params(`{"MessageAttributes":"x"}`), mk)
	var f *failure.Failure
	require.ErrorAs(t, err, &f)
	require.Contains(t, f.Error(), "'MessageAttributes' must be an object")

	_, err = integration.MessageAttributes(params(`{"MessageAttributes":{"blob":{"DataType":"Binary","BinaryValue":"***"}}}`), mk)
	require.ErrorAs(t, err, &f)
	require.Contains(t, f.Error(), "'MessageAttributes.blob.BinaryValue' is not base64")
}
