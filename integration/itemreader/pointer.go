package itemreader

import (
	"io"
	"strconv"
	"strings"

	"stepwise/jsonvalue"
)

// ReaderConfig.ItemsPointer is a JSON Pointer (RFC 6901) to the array of
// items inside a JSON object: {"data": {"rows": [...]}} with ItemsPointer
// "/data/rows" is the items of rows. The object is read whole (the array
// it holds may be anywhere in it), then its array handed over a batch at
// a time.

// CheckPointer refuses a text that is not a JSON Pointer: "" or a
// sequence of "/"-prefixed reference tokens, '~' only in "~0" or "~1".
func CheckPointer(ptr string) error {
	if ptr == "" {
		return nil
	}
	if ptr[0] != '/' {
		return readerFailure("The ItemsPointer '%s' is not a JSON Pointer: it must be empty or begin with '/'.", ptr)
	}
	for i := 0; i < len(ptr); i++ {
		if ptr[i] == '~' && (i+1 >= len(ptr) || (ptr[i+1] != '0' && ptr[i+1] != '1')) {
			return readerFailure("The ItemsPointer '%s' is not a JSON Pointer: '~' must be followed by '0' or '1'.", ptr)
		}
	}
	return nil
}

// Resolve is the value ptr points at in doc, and whether there is one.
func Resolve(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case *jsonvalue.Object:
			v, ok := c.Get(tok)
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) || (len(tok) > 1 && tok[0] == '0') || tok[0] == '+' {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// PointedItems is the array ptr points at in doc, or
// States.ItemReaderFailed where it points at nothing or at something else.
func PointedItems(doc any, ptr string) ([]any, error) {
	if err := CheckPointer(ptr); err != nil {
		return nil, err
	}
	v, ok := Resolve(doc, ptr)
	if !ok {
		return nil, readerFailure("The ItemsPointer '%s' points at nothing in the JSON object.", ptr)
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, readerFailure("The ItemsPointer '%s' does not point at a JSON array: it points at %s.", ptr, kindOf(v))
	}
	return arr, nil
}

// kindOf names a JSON value's type, with an article.
func kindOf(v any) string {
	switch v.(type) {
	case *jsonvalue.Object:
		return "an object"
	case string:
		return "a string"
	case jsonvalue.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a value"
}

// streamPointed reads the JSON document r whole and hands over the items
// of the array its ItemsPointer points at.
func streamPointed(r io.Reader, ptr string, out *sink) error {
	if err := CheckPointer(ptr); err != nil {
		return err
	}
	text, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	doc, err := jsonvalue.Parse(text)
	if err != nil {
		return readerFailure("The object is not valid JSON, so ItemsPointer '%s' cannot be followed in it.", ptr)
	}
	items, err := PointedItems(doc, ptr)
	if err != nil {
		return err
	}
	for _, it := range items {
		if out.full() {
			return nil
		}
		if err := out.add(it); err != nil {
			return err
		}
	}
	return nil
}
