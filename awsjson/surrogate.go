package awsjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
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

// scanBody reports whether body is valid UTF-8, starts with an object and
// nests at most maxDepth deep (counting brackets outside strings; the
// syntax is left to encoding/json), and whether a string in it escapes an
// unpaired surrogate.
func scanBody(body []byte) (plain, unpaired bool) {
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) == 0 || body[0] != '{' || !utf8.Valid(body) {
		return false, false
	}
	depth, inString := 0, false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case inString:
			switch c {
			case '\\':
				if r, ok := escapedRune(body[i:]); ok && utf16.IsSurrogate(r) {
					if r2, ok := escapedRune(body[i+6:]); ok && utf16.DecodeRune(r, r2) != utf8.RuneError {
						i += 6 // the pair
					} else {
						unpaired = true
					}
				}
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > maxDepth {
				return false, unpaired
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return true, unpaired
}

// escapedRune reads the \uXXXX escape b starts with.
func escapedRune(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// keepNames decodes again, keeping unpaired surrogates, the top-level
// members of body that hold names (tagged `awsjson:"name"`) in in, a
// pointer to the struct body was decoded into. As encoding/json does, a
// member matches its field's name in any case, and the last of the same
// name wins.
func keepNames(body []byte, in any) {
	v := reflect.ValueOf(in)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return
	}
	v = v.Elem()
	type nameField struct {
		key   string
		index int
		raw   json.RawMessage
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
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return
		}
		for i := range fields {
			if strings.EqualFold(key, fields[i].key) {
				fields[i].raw = raw
			}
		}
	}
	for _, f := range fields {
		s, kept := unquoteKeeping(f.raw)
		if !kept {
			continue
		}
		fv := v.Field(f.index)
		switch {
		case fv.Kind() == reflect.String:
			fv.SetString(s)
		case fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.String && !fv.IsNil():
			fv.Elem().SetString(s)
		}
	}
}

// unquoteKeeping decodes the JSON string raw, writing an unpaired
// surrogate in WTF-8 form; kept reports whether there was one.
func unquoteKeeping(raw []byte) (s string, kept bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	raw = raw[1 : len(raw)-1]
	b := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 == len(raw) {
			b = append(b, c)
			continue
		}
		if r, ok := escapedRune(raw[i:]); ok {
			i += 5
			if utf16.IsSurrogate(r) {
				if r2, ok := escapedRune(raw[i+1:]); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						b = utf8.AppendRune(b, dec)
						i += 6
						continue
					}
				}
				b = append(b, 0xe0|byte(r>>12), 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f)
				kept = true
				continue
			}
			b = utf8.AppendRune(b, r)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		default: // " \ /
			b = append(b, raw[i])
		}
	}
	return string(b), kept
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
