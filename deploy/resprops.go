package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"stepwise/deploy/cfn"
)

// resProps reads a resource's resolved properties (or a part of them),
// each error naming the property's path: "Properties.Timeout: ...".
type resProps struct {
	m  map[string]any
	at string // "Properties", "Properties.Code"
}

func propsOf(r *resource) resProps { return resProps{m: r.Props, at: "Properties"} }

func (p resProps) path(key string) string { return p.at + "." + key }

func (p resProps) errorf(key, format string, args ...any) error {
	return fmt.Errorf("%s: %s", p.path(key), fmt.Sprintf(format, args...))
}

func (p resProps) has(key string) bool {
	_, ok := p.m[key]
	return ok
}

// str is a string property; a number or a boolean is written as text
// (CloudFormation takes either where a string is due).
func (p resProps) str(key string) (string, error) {
	switch v := p.m[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	case bool:
		return strconv.FormatBool(v), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case int:
		return strconv.Itoa(v), nil
	default:
		return "", p.errorf(key, "a string, not %s", cfn.TypeName(v))
	}
}

// num is an integer property, def when absent; a numeric string is
// taken (a parameter's value is one).
func (p resProps) num(key string, def int) (int, error) {
	var s string
	switch v := p.m[key].(type) {
	case nil:
		return def, nil
	case json.Number:
		s = v.String()
	case string:
		s = strings.TrimSpace(v)
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	case int:
		return v, nil
	default:
		return 0, p.errorf(key, "a number, not %s", cfn.TypeName(v))
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, p.errorf(key, "a whole number, not %q", s)
	}
	return n, nil
}

// flag is a boolean property, def when absent; "true" and "false" as
// strings are taken.
func (p resProps) flag(key string, def bool) (bool, error) {
	if p.m[key] == nil {
		return def, nil
	}
	if b, ok := boolOf(p.m[key]); ok {
		return b, nil
	}
	return false, p.errorf(key, "true or false, not %v", p.m[key])
}

// boolOf reads a boolean written as true/false or "true"/"false" (a
// parameter's value is a string).
func boolOf(v any) (b, ok bool) {
	switch v := v.(type) {
	case bool:
		return v, true
	case string:
		switch strings.ToLower(v) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// obj is a map property: nil and no error when absent.
func (p resProps) obj(key string) (resProps, bool, error) {
	switch v := p.m[key].(type) {
	case nil:
		return resProps{}, false, nil
	case map[string]any:
		return resProps{m: v, at: p.path(key)}, true, nil
	default:
		return resProps{}, false, p.errorf(key, "an object, not %s", cfn.TypeName(v))
	}
}

// strMap is a map of strings (Environment.Variables): scalars are
// written as text.
func (p resProps) strMap(key string) (map[string]string, error) {
	o, ok, err := p.obj(key)
	if err != nil || !ok {
		return nil, err
	}
	out := make(map[string]string, len(o.m))
	for k := range o.m {
		s, err := o.str(k)
		if err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

// ignored names the properties given that are not used here, for a
// warning; none gives "".
func (p resProps) ignored(used ...string) string {
	var out []string
	for k := range p.m {
		found := false
		for _, u := range used {
			if k == u {
				found = true
				break
			}
		}
		if !found {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// decodeInto reads a property's value (or the whole, key "") into v as
// JSON, refusing fields v does not have. A number given as a string (a
// parameter's value) is read as the number.
func (p resProps) decodeInto(key string, v any) error {
	var src any = p.m
	at := p.at
	if key != "" {
		src, at = p.m[key], p.path(key)
	}
	if err := decodeNumbers(src, v, true); err != nil {
		return fmt.Errorf("%s: %s", at, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// decodeNumbers reads src into v as JSON; where v has a number and src
// a string of one, the string is read as the number.
func decodeNumbers(src, v any, strict bool) error {
	src = cfn.CopyValue(src)
	for range 64 {
		b, err := json.Marshal(src)
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		if strict {
			dec.DisallowUnknownFields()
		}
		err = dec.Decode(v)
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) || te.Value != "string" || te.Field == "" || !numbersAt(src, strings.Split(te.Field, ".")) {
			return err
		}
	}
	return errors.New("too many numbers given as strings")
}

// numbersAt turns the numeric strings at a JSON path (lists walked
// through) into numbers, saying whether it turned any.
func numbersAt(v any, path []string) bool {
	switch x := v.(type) {
	case []any:
		turned := false
		for i, e := range x {
			if len(path) == 1 {
				if s, ok := e.(string); ok && isNumber(s) {
					x[i], turned = json.Number(s), true
				}
				continue
			}
			turned = numbersAt(e, path) || turned
		}
		return turned
	case map[string]any:
		e, ok := x[path[0]]
		if !ok {
			return false
		}
		if len(path) == 1 {
			if s, ok := e.(string); ok && isNumber(strings.TrimSpace(s)) {
				x[path[0]] = json.Number(strings.TrimSpace(s))
				return true
			}
			if l, ok := e.([]any); ok {
				return numbersAt(l, path)
			}
			return false
		}
		return numbersAt(e, path[1:])
	}
	return false
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && s != ""
}
