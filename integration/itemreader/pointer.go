package itemreader

import (
	"io"
	"strconv"
	"strings"

	"stepwise/internal/boundedfile"
	"stepwise/jsonvalue"
)

// ReaderConfig.ItemsPointer is a JSON Pointer (RFC 6901) to the items
// inside a JSON document: {"data": {"rows": [...]}} with ItemsPointer
// "/data/rows" is the items of rows. What it points at, like the whole
// document without one, is an array (its elements are the items) or an
// object (its members are, each {"Key": name, "Value": value}). A
// document with a pointer, or an object, is read whole (what the pointer
// names may be anywhere in it), then its items handed over a batch at a
// time; an array without a pointer is read an item at a time (streamJSON).

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

// PointedItems is the items of what ptr points at in doc: an array's
// elements, or an object's members as {"Key": name, "Value": value}
// objects in the object's order, as AWS iterates an object; where it
// points at nothing or at a value of another type, the read fails as
// AWS's does.
func PointedItems(doc any, ptr string) ([]any, error) {
	if err := CheckPointer(ptr); err != nil {
		return nil, err
	}
	v, ok := Resolve(doc, ptr)
	if !ok {
		return nil, readerFailure("The provided ReaderConfig.ItemsPointer does not match any valid path in the JSON structure.")
	}
	switch t := v.(type) {
	case []any:
		return t, nil
	case *jsonvalue.Object:
		return Entries(t), nil
	}
	return nil, readerFailure("Attempting to map over non-iterable node.")
}

// Entries are an object's members as items: {"Key": name, "Value": value}.
func Entries(obj *jsonvalue.Object) []any {
	items := make([]any, 0, obj.Len())
	for k, v := range obj.All() {
		e := jsonvalue.NewObject(2)
		e.Set("Key", k)
		e.Set("Value", v)
		items = append(items, e)
	}
	return items
}

// MaxPointedSize bounds a JSON object whose items are found at
// ItemsPointer (or its members'): it is read whole, at most this much. A
// JSON array, JSON Lines and CSV are read an item at a time, of any size.
const MaxPointedSize = 64 << 20

// maxPointedSize is MaxPointedSize, lowered by tests.
var maxPointedSize = MaxPointedSize

// streamPointed reads the JSON document r whole and hands over the items
// of what ptr points at.
func streamPointed(r io.Reader, ptr string, out *sink) error {
	if err := CheckPointer(ptr); err != nil {
		return err
	}
	text, err := io.ReadAll(io.LimitReader(r, int64(maxPointedSize)+1))
	if err != nil {
		return err
	}
	if len(text) > maxPointedSize {
		return readerFailure("The JSON object is larger than %s, the most read whole to find the items in (a JSON array, JSON Lines or CSV are read an item at a time).", boundedfile.Size(int64(maxPointedSize)))
	}
	doc, err := jsonvalue.Parse(text)
	if err != nil {
		return readerFailure("Attempting to map over non-iterable node.")
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
