package http

import (
	"net/url"
	"strconv"
	"strings"

	"stepwise/jsonvalue"
)

// encodeForm writes an object as application/x-www-form-urlencoded text,
// members in order. Nested objects are named with brackets (a[b]=1);
// arrays as the array format says, for {"array": ["a", "b"]}:
//
//	INDICES   array[0]=a&array[1]=b
//	REPEAT    array=a&array=b
//	COMMAS    array=a,b
//	BRACKETS  array[]=a&array[]=b
//
// An array of objects or arrays is written with REPEAT's names under
// COMMAS. Names and values are escaped; the brackets and the commas the
// format adds are not. Null is written as an empty value.
func encodeForm(obj *jsonvalue.Object, format string) string {
	var b strings.Builder
	for name, v := range obj.All() {
		appendFormValue(&b, url.QueryEscape(name), v, format)
	}
	return b.String()
}

func appendFormValue(b *strings.Builder, name string, v any, format string) {
	switch v := v.(type) {
	case *jsonvalue.Object:
		for k, item := range v.All() {
			appendFormValue(b, name+"["+url.QueryEscape(k)+"]", item, format)
		}
	case []any:
		if joined, ok := commaList(v); ok && format == arrayCommas {
			appendFormPair(b, name, joined)
			return
		}
		for i, item := range v {
			appendFormValue(b, arrayItemName(name, i, format), item, format)
		}
	default:
		s, _ := scalarText(v)
		appendFormPair(b, name, url.QueryEscape(s))
	}
}

// commaList joins an array of scalars with commas, each escaped.
func commaList(items []any) (string, bool) {
	parts := make([]string, len(items))
	for i, item := range items {
		if item == nil {
			continue
		}
		s, ok := scalarText(item)
		if !ok {
			return "", false
		}
		parts[i] = url.QueryEscape(s)
	}
	return strings.Join(parts, ","), true
}

func arrayItemName(name string, i int, format string) string {
	switch format {
	case arrayIndices:
		return name + "[" + strconv.Itoa(i) + "]"
	case arrayBrackets:
		return name + "[]"
	default:
		return name
	}
}

func appendFormPair(b *strings.Builder, name, escapedValue string) {
	if b.Len() > 0 {
		b.WriteByte('&')
	}
	b.WriteString(name)
	b.WriteByte('=')
	b.WriteString(escapedValue)
}
