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
	v, err := jsonvalue.Parse([]byte(`{"color":{"DataType":"String","StringValue":"red"},"blob":{"DataType":"Binary","BinaryValue":"aGk="}}`))
	require.NoError(t, err)
	got, err := integration.MessageAttributes(v, mk)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "String", *got["color"].dataType)
	require.Equal(t, "red", *got["color"].value)
	require.Nil(t, got["color"].binary)
	require.Equal(t, []byte("hi"), got["blob"].binary)
	require.Nil(t, got["blob"].value)

	_, err = integration.MessageAttributes("x", mk)
	var f *failure.Failure
	require.ErrorAs(t, err, &f)
	require.Contains(t, f.Error(), "'MessageAttributes' must be an object")

	bad, err := jsonvalue.Parse([]byte(`{"blob":{"DataType":"Binary","BinaryValue":"***"}}`))
	require.NoError(t, err)
	_, err = integration.MessageAttributes(bad, mk)
	require.ErrorAs(t, err, &f)
	require.Contains(t, f.Error(), "'MessageAttributes.blob.BinaryValue' is not base64")
}
