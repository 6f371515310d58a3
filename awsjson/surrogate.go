package awsjson

import (
	"errors"
	"io"
	"reflect"
	"strings"

	"stepwise/jsonvalue"
)

// Unpaired surrogates
//
// JSON text may escape a UTF-16 surrogate that has no partner ("\ud800"),
// which no Go string holds as a character: encoding/json decodes it as
// U+FFFD. For a resource name that would store a name other than the one
// sent, where AWS refuses it (InvalidName). So a top-level string member
// of a request tagged `awsjson:"name"` keeps an unpaired surrogate as it
// was sent, in WTF-8 form (the three bytes UTF-8 would give the code
// unit, not valid UTF-8), and the service refuses the name. Other members
// are decoded as encoding/json does; an escape inside a member's JSON
// text (an execution's input) is that text's own and stays as it is.
// Errors write such a name back with the escape it came with
// (frontdoor.Text).

// scanBody reports whether body is one JSON object of valid UTF-8 nested
// at most maxDepth deep, and whether a string in it escapes an unpaired
// surrogate.
func scanBody(body []byte) (plain, unpaired bool) {
	s := jsonvalue.NewScanner(body)
	s.SetMaxDepth(maxDepth)
	t, err := s.Next()
	if err != nil || t.Kind != jsonvalue.BeginObject {
		return false, false
	}
	for {
		t, err := s.Next()
		if err != nil {
			return errors.Is(err, io.EOF), unpaired
		}
		unpaired = unpaired || t.Unpaired
	}
}

// keepNames decodes again, keeping unpaired surrogates, the top-level
// members of body that hold names (tagged `awsjson:"name"`) in in, a
// pointer to the struct body was decoded into. As encoding/json does, a
// member matches its field's name in any case, and the last of the same
// name wins. body is valid JSON.
func keepNames(body []byte, in any) {
	v := reflect.ValueOf(in)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return
	}
	v = v.Elem()
	type nameField struct {
		key   string
		index int
		value string
		kept  bool
	}
	var fields []nameField
	for i, f := range reflect.VisibleFields(v.Type()) {
		if f.Tag.Get("awsjson") != "name" || len(f.Index) != 1 {
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		fields = append(fields, nameField{key: key, index: i})
	}
	if len(fields) == 0 {
		return
	}
	s := jsonvalue.NewScanner(body)
	s.SetMaxDepth(maxDepth)
	if t, err := s.Next(); err != nil || t.Kind != jsonvalue.BeginObject {
		return
	}
	for {
		t, err := s.Next()
		if err != nil || t.Kind != jsonvalue.NameToken {
			break
		}
		key := s.Text(t)
		if t, err = s.Next(); err != nil {
			return
		}
		for i := range fields {
			if strings.EqualFold(key, fields[i].key) {
				fields[i].kept = t.Kind == jsonvalue.StringToken && t.Unpaired
				if fields[i].kept {
					fields[i].value = s.TextWTF8(t)
				}
			}
		}
		if err := s.Skip(t); err != nil {
			return
		}
	}
	for _, f := range fields {
		if !f.kept {
			continue
		}
		fv := v.Field(f.index)
		switch {
		case fv.Kind() == reflect.String:
			fv.SetString(f.value)
		case fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.String && !fv.IsNil():
			fv.Elem().SetString(f.value)
		}
	}
}
