package awsjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

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
// Errors write such a name back with the escape it came with (wireText).

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

// wireText is text written to a client. Where it holds a surrogate in
// WTF-8 form (a name as a client sent it), the JSON has the \uXXXX
// escape the client sent, where encoding/json would write U+FFFD.
type wireText string

func (t wireText) MarshalJSON() ([]byte, error) {
	s := string(t)
	if utf8.ValidString(s) {
		return quote(s)
	}
	out := []byte{'"'}
	for s != "" {
		i := wtf8Surrogate(s)
		if i < 0 {
			i = len(s)
		}
		q, err := quote(s[:i])
		if err != nil {
			return nil, err
		}
		out = append(out, q[1:len(q)-1]...)
		if i == len(s) {
			break
		}
		r := rune(s[i]&0x0f)<<12 | rune(s[i+1]&0x3f)<<6 | rune(s[i+2]&0x3f)
		out = append(out, `\u`...)
		out = append(out, "0123456789abcdef"[r>>12], "0123456789abcdef"[r>>8&0xf], "0123456789abcdef"[r>>4&0xf], "0123456789abcdef"[r&0xf])
		s = s[i+3:]
	}
	return append(out, '"'), nil
}

// wtf8Surrogate is the index of the first surrogate in WTF-8 form in s, or
// -1.
func wtf8Surrogate(s string) int {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == 0xed && s[i+1] >= 0xa0 && s[i+1] <= 0xbf && s[i+2] >= 0x80 && s[i+2] <= 0xbf {
			return i
		}
	}
	return -1
}

// quote is s as a JSON string, without escaping HTML characters.
func quote(s string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
