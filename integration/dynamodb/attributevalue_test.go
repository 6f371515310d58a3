package dynamodb

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"stepwise/jsonvalue"
)

func parse(t testing.TB, text string) any {
	t.Helper()
	v, err := jsonvalue.ParseString(text)
	require.NoError(t, err)
	return v
}

func TestAttributeValueEveryType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		json string
		want types.AttributeValue
	}{
		{`{"S": "text"}`, &types.AttributeValueMemberS{Value: "text"}},
		{`{"S": ""}`, &types.AttributeValueMemberS{Value: ""}},
		{`{"N": "-12.50"}`, &types.AttributeValueMemberN{Value: "-12.50"}},
		{`{"B": "AAEC/w=="}`, &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 255}}},
		{`{"BOOL": true}`, &types.AttributeValueMemberBOOL{Value: true}},
		{`{"BOOL": false}`, &types.AttributeValueMemberBOOL{Value: false}},
		{`{"NULL": true}`, &types.AttributeValueMemberNULL{Value: true}},
		{`{"SS": ["a", "b"]}`, &types.AttributeValueMemberSS{Value: []string{"a", "b"}}},
		{`{"NS": ["1", "2.5"]}`, &types.AttributeValueMemberNS{Value: []string{"1", "2.5"}}},
		{`{"BS": ["AQ==", "Ag=="]}`, &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2}}}},
		{`{"L": []}`, &types.AttributeValueMemberL{Value: []types.AttributeValue{}}},
		{`{"M": {}}`, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}},
		{
			`{"M": {"list": {"L": [{"S": "x"}, {"M": {"deep": {"NS": ["7"]}}}, {"NULL": true}]}, "flag": {"BOOL": false}}}`,
			&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				"flag": &types.AttributeValueMemberBOOL{Value: false},
				"list": &types.AttributeValueMemberL{Value: []types.AttributeValue{
					&types.AttributeValueMemberS{Value: "x"},
					&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
						"deep": &types.AttributeValueMemberNS{Value: []string{"7"}},
					}},
					&types.AttributeValueMemberNULL{Value: true},
				}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.json, func(t *testing.T) {
			t.Parallel()
			in := parse(t, tt.json)
			got, err := decodeAttributeValue(in, "Item.a")
			require.NoError(t, err)
			require.Equal(t, tt.want, got)

			back, err := encodeAttributeValue(got)
			require.NoError(t, err)
			require.True(t, jsonvalue.Equal(in, back), "encoded back as %s", jsonvalue.String(back))
		})
	}
}

func TestEncodeItemSortsMembers(t *testing.T) {
	t.Parallel()
	got, err := encodeItem(map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "1"},
		"S":  &types.AttributeValueMemberN{Value: "2"},
		"b":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"z": &types.AttributeValueMemberBOOL{}, "a": &types.AttributeValueMemberNULL{Value: true}}},
	})
	require.NoError(t, err)
	require.Equal(t, `{"S":{"N":"2"},"b":{"M":{"a":{"NULL":true},"z":{"BOOL":false}}},"id":{"S":"1"}}`, jsonvalue.String(got))
}

func TestDecodeAttributeValueErrors(t *testing.T) {
	t.Parallel()
	const types = "S, N, B, SS, NS, BS, M, L, BOOL, NULL"
	tests := []struct {
		json string
		want string
	}{
		{`"x"`, "The field 'Item.a' must be a DynamoDB attribute value: an object with one member naming its type (" + types + ")"},
		{`{}`, "The field 'Item.a' must be a DynamoDB attribute value: an object with one member naming its type (" + types + ")"},
		{`{"S": "x", "N": "1"}`, "The field 'Item.a' must be a DynamoDB attribute value: an object with one member naming its type (" + types + ")"},
		{`{"X": "x"}`, "The field 'Item.a.X' names no DynamoDB attribute value type (" + types + ")"},
		{`{"s": "x"}`, "The field 'Item.a.s' names no DynamoDB attribute value type (" + types + ")"},
		{`{"S": 1}`, "The field 'Item.a.S' must be a string, not number"},
		{`{"N": 1}`, "The field 'Item.a.N' must be a string, not number"},
		{`{"B": "not base64!"}`, "The field 'Item.a.B' must be base64 text: illegal base64 data at input byte 3"},
		{`{"BOOL": "true"}`, "The field 'Item.a.BOOL' must be a boolean, not string"},
		{`{"NULL": null}`, "The field 'Item.a.NULL' must be a boolean, not null"},
		{`{"SS": "a"}`, "The field 'Item.a.SS' must be an array, not string"},
		{`{"NS": [1]}`, "The field 'Item.a.NS[0]' must be a string, not number"},
		{`{"BS": ["AQ==", "%"]}`, "The field 'Item.a.BS[1]' must be base64 text: illegal base64 data at input byte 0"},
		{`{"M": []}`, "The field 'Item.a.M' must be an object of DynamoDB attribute values, not array"},
		{`{"M": {"k": {"L": [{"S": "ok"}, {"N": true}]}}}`, "The field 'Item.a.M.k.L[1].N' must be a string, not boolean"},
		{`{"L": {"S": "x"}}`, "The field 'Item.a.L' must be an array, not object"},
	}
	for _, tt := range tests {
		t.Run(tt.json, func(t *testing.T) {
			t.Parallel()
			_, err := decodeAttributeValue(parse(t, tt.json), "Item.a")
			require.EqualError(t, err, "States.TaskFailed: "+tt.want)
		})
	}
}

func TestDecodeItemNotAnObject(t *testing.T) {
	t.Parallel()
	_, err := decodeItem(parse(t, `[{"S": "x"}]`), "Key")
	require.EqualError(t, err, "States.TaskFailed: The field 'Key' must be an object of DynamoDB attribute values, not array")
}

func TestEncodeAttributeValueUnknownType(t *testing.T) {
	t.Parallel()
	_, err := encodeAttributeValue(&types.UnknownUnionMember{Tag: "V"})
	require.EqualError(t, err, "DynamoDB returned an attribute value of an unknown type (*types.UnknownUnionMember)")
	_, err = encodeItem(map[string]types.AttributeValue{"a": &types.AttributeValueMemberL{Value: []types.AttributeValue{nil}}})
	require.EqualError(t, err, "DynamoDB returned an attribute value of an unknown type (<nil>)")
}

// FuzzAttributeValue checks that decoding never panics and that what
// decodes survives a round trip: encoding it and decoding that gives the
// same value (base64 text may differ in its padding bits, hence the
// comparison of decoded values).
func FuzzAttributeValue(f *testing.F) {
	for _, seed := range []string{
		`{"S": "x"}`, `{"N": "1e3"}`, `{"B": "AAEC"}`, `{"BOOL": true}`, `{"NULL": true}`,
		`{"SS": ["a"]}`, `{"NS": ["1"]}`, `{"BS": ["AQ=="]}`,
		`{"M": {"a": {"L": [{"S": "x"}, {"M": {}}]}}}`, `{"L": [{"BS": []}]}`,
		`{"M": {"a": {"S": 1}}}`, `[]`, `{"X": 1}`, `null`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		in, err := jsonvalue.ParseString(text)
		if err != nil {
			return
		}
		av, err := decodeAttributeValue(in, "a")
		if err != nil {
			return
		}
		enc, err := encodeAttributeValue(av)
		require.NoError(t, err)
		again, err := decodeAttributeValue(enc, "a")
		require.NoError(t, err)
		require.Equal(t, av, again)
	})
}
