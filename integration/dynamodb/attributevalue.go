package dynamodb

import (
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stepwise/jsonvalue"
)

// An AttributeValue in DynamoDB JSON is an object with exactly one member
// naming its type:
//
//	{"S": "text"}  {"N": "1.5"}  {"B": "<base64>"}  {"BOOL": true}  {"NULL": true}
//	{"SS": ["a"]}  {"NS": ["1"]} {"BS": ["<base64>"]}
//	{"M": {"name": <AttributeValue>, ...}}  {"L": [<AttributeValue>, ...]}
//
// Numbers are strings, as DynamoDB keeps their exact decimal text;
// binary values are base64 text.

// attributeTypes lists the members that name an AttributeValue's type.
const attributeTypes = "S, N, B, SS, NS, BS, M, L, BOOL, NULL"

// decodeItem converts an object of AttributeValues (an Item, a Key,
// ExpressionAttributeValues); path names it in errors.
func decodeItem(v any, path string) (map[string]types.AttributeValue, error) {
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, invalid(path, "must be an object of DynamoDB attribute values, not %s", jsonvalue.TypeName(v))
	}
	item := make(map[string]types.AttributeValue, obj.Len())
	for name, av := range obj.All() {
		dec, err := decodeAttributeValue(av, path+"."+name)
		if err != nil {
			return nil, err
		}
		item[name] = dec
	}
	return item, nil
}

// decodeAttributeValue converts one AttributeValue in DynamoDB JSON.
func decodeAttributeValue(v any, path string) (types.AttributeValue, error) {
	obj, ok := v.(*jsonvalue.Object)
	if !ok || obj.Len() != 1 {
		return nil, invalid(path, "must be a DynamoDB attribute value: an object with one member naming its type (%s)", attributeTypes)
	}
	kind, val := obj.At(0)
	path += "." + kind
	switch kind {
	case "S":
		s, err := asString(val, path)
		return &types.AttributeValueMemberS{Value: s}, err
	case "N":
		s, err := asString(val, path)
		return &types.AttributeValueMemberN{Value: s}, err
	case "B":
		b, err := asBinary(val, path)
		return &types.AttributeValueMemberB{Value: b}, err
	case "BOOL":
		b, err := asBool(val, path)
		return &types.AttributeValueMemberBOOL{Value: b}, err
	case "NULL":
		b, err := asBool(val, path)
		return &types.AttributeValueMemberNULL{Value: b}, err
	case "SS":
		ss, err := decodeList(val, path, asString)
		return &types.AttributeValueMemberSS{Value: ss}, err
	case "NS":
		ns, err := decodeList(val, path, asString)
		return &types.AttributeValueMemberNS{Value: ns}, err
	case "BS":
		bs, err := decodeList(val, path, asBinary)
		return &types.AttributeValueMemberBS{Value: bs}, err
	case "M":
		m, err := decodeItem(val, path)
		return &types.AttributeValueMemberM{Value: m}, err
	case "L":
		l, err := decodeList(val, path, decodeAttributeValue)
		return &types.AttributeValueMemberL{Value: l}, err
	default:
		return nil, invalid(path, "names no DynamoDB attribute value type (%s)", attributeTypes)
	}
}

// decodeList converts a JSON array element by element.
func decodeList[T any](v any, path string, decode func(any, string) (T, error)) ([]T, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, invalid(path, "must be an array, not %s", jsonvalue.TypeName(v))
	}
	out := make([]T, len(arr))
	for i, e := range arr {
		d, err := decode(e, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

func asString(v any, path string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", invalid(path, "must be a string, not %s", jsonvalue.TypeName(v))
	}
	return s, nil
}

func asBool(v any, path string) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, invalid(path, "must be a boolean, not %s", jsonvalue.TypeName(v))
	}
	return b, nil
}

func asBinary(v any, path string) ([]byte, error) {
	s, err := asString(v, path)
	if err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, invalid(path, "must be base64 text: %v", err)
	}
	return b, nil
}

// encodeItem converts a map of AttributeValues to DynamoDB JSON, its
// members sorted by name.
func encodeItem(item map[string]types.AttributeValue) (*jsonvalue.Object, error) {
	names := make([]string, 0, len(item))
	for name := range item {
		names = append(names, name)
	}
	slices.Sort(names)
	out := jsonvalue.NewObject(len(names))
	for _, name := range names {
		v, err := encodeAttributeValue(item[name])
		if err != nil {
			return nil, err
		}
		out.Set(name, v)
	}
	return out, nil
}

// encodeAttributeValue converts an AttributeValue to DynamoDB JSON.
func encodeAttributeValue(av types.AttributeValue) (*jsonvalue.Object, error) {
	var kind string
	var val any
	switch t := av.(type) {
	case *types.AttributeValueMemberS:
		kind, val = "S", t.Value
	case *types.AttributeValueMemberN:
		kind, val = "N", t.Value
	case *types.AttributeValueMemberB:
		kind, val = "B", base64.StdEncoding.EncodeToString(t.Value)
	case *types.AttributeValueMemberBOOL:
		kind, val = "BOOL", t.Value
	case *types.AttributeValueMemberNULL:
		kind, val = "NULL", t.Value
	case *types.AttributeValueMemberSS:
		kind, val = "SS", encodeList(t.Value, func(s string) any { return s })
	case *types.AttributeValueMemberNS:
		kind, val = "NS", encodeList(t.Value, func(s string) any { return s })
	case *types.AttributeValueMemberBS:
		kind, val = "BS", encodeList(t.Value, func(b []byte) any { return base64.StdEncoding.EncodeToString(b) })
	case *types.AttributeValueMemberM:
		m, err := encodeItem(t.Value)
		if err != nil {
			return nil, err
		}
		kind, val = "M", m
	case *types.AttributeValueMemberL:
		l := make([]any, len(t.Value))
		for i, e := range t.Value {
			v, err := encodeAttributeValue(e)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		kind, val = "L", l
	default:
		return nil, fmt.Errorf("DynamoDB returned an attribute value of an unknown type (%T)", av)
	}
	out := jsonvalue.NewObject(1)
	out.Set(kind, val)
	return out, nil
}

func encodeList[T any](vals []T, encode func(T) any) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = encode(v)
	}
	return out
}
