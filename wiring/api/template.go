package api

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf16"
)

// A request mapping template (Apache Velocity, VTL) makes a REST API's
// AWS integration's request. Served here is the subset the Step
// Functions integrations use: text, and references
//
//	$input.json('$'), $input.json('$.a.b'), $input.body,
//	$input.params('name'),
//	$util.escapeJavaScript(x), $util.base64Encode(x), $util.base64Decode(x),
//	$util.urlEncode(x), $util.urlDecode(x),
//	$context.requestId (stage, httpMethod, resourcePath, path, apiId,
//	accountId, requestTimeEpoch), $stageVariables.name,
//
// in the forms $x, $!x, ${x}, each followed by string methods
// .replaceAll(regex, text), .replace(text, text), .toLowerCase(),
// .toUpperCase(), .trim(). Directives (#set, #if, #foreach...) are
// refused with an error saying so; a $ that starts no reference of
// these roots is text, as Velocity prints an unknown reference.

// template is a parsed mapping template.
type template []node

type node struct {
	text string
	ref  *ref // nil: text
}

// ref is a reference: root.name(args) followed by methods.
type ref struct {
	src     string
	root    string // input, util, context, stageVariables
	name    string
	args    []arg
	methods []call
}

type call struct {
	name string
	args []arg
}

// arg is a string literal or a reference.
type arg struct {
	lit string
	ref *ref
}

var directive = regexp.MustCompile(`^#(set|if|elseif|else|end|foreach|macro|define|parse|include|evaluate|break|stop|\{|#|\*)`)

var roots = map[string]bool{"input": true, "util": true, "context": true, "stageVariables": true}

func parseTemplate(src string) (template, error) {
	var t template
	var text strings.Builder
	for i := 0; i < len(src); {
		c := src[i]
		if c == '#' {
			if m := directive.FindString(src[i:]); m != "" {
				return nil, fmt.Errorf("%q: VTL directives (#set, #if, #foreach, comments) are not served here: only text and $input, $util, $context and $stageVariables references", m)
			}
		}
		if c == '$' {
			r, n, err := parseRef(src[i:])
			if err != nil {
				return nil, err
			}
			if r != nil {
				if text.Len() > 0 {
					t = append(t, node{text: text.String()})
					text.Reset()
				}
				t = append(t, node{ref: r})
				i += n
				continue
			}
		}
		text.WriteByte(c)
		i++
	}
	if text.Len() > 0 {
		t = append(t, node{text: text.String()})
	}
	return t, nil
}

func isIdent(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && (c == '-' || c >= '0' && c <= '9')
}

// parseRef parses the reference s starts with ($...), and says how long
// it is; nil for a $ that starts no reference of the known roots.
func parseRef(s string) (*ref, int, error) {
	i := 1
	if i < len(s) && s[i] == '!' {
		i++
	}
	braced := i < len(s) && s[i] == '{'
	if braced {
		i++
	}
	ident := func() string {
		j := i
		for j < len(s) && isIdent(s[j], j == i) {
			j++
		}
		id := s[i:j]
		i = j
		return id
	}
	root := ident()
	if !roots[root] {
		return nil, 0, nil
	}
	r := &ref{root: root}
	if i >= len(s) || s[i] != '.' {
		return nil, 0, fmt.Errorf("%q: a reference to $%s alone is not served here", s[:i], root)
	}
	i++
	r.name = ident()
	var err error
	if i < len(s) && s[i] == '(' {
		var n int
		if r.args, n, err = parseArgs(s[i:]); err != nil {
			return nil, 0, err
		}
		i += n
	}
	for i+1 < len(s) && s[i] == '.' && isIdent(s[i+1], true) {
		i++
		c := call{name: ident()}
		if i >= len(s) || s[i] != '(' {
			return nil, 0, fmt.Errorf("%q: only methods (.name(...)) may follow a reference here", s[:i])
		}
		var n int
		if c.args, n, err = parseArgs(s[i:]); err != nil {
			return nil, 0, err
		}
		i += n
		r.methods = append(r.methods, c)
	}
	if braced {
		if i >= len(s) || s[i] != '}' {
			return nil, 0, fmt.Errorf("%q: a ${ reference is not closed with }", s[:min(i+1, len(s))])
		}
		i++
	}
	r.src = s[:i]
	if err := r.check(); err != nil {
		return nil, 0, err
	}
	return r, i, nil
}

// parseArgs parses "(arg, arg)" at the start of s.
func parseArgs(s string) ([]arg, int, error) {
	var args []arg
	i := 1
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return nil, 0, fmt.Errorf("%q: arguments not closed with )", s)
		}
		if s[i] == ')' && len(args) == 0 {
			return args, i + 1, nil
		}
		switch s[i] {
		case '\'', '"':
			q := s[i]
			j := strings.IndexByte(s[i+1:], q)
			if j < 0 {
				return nil, 0, fmt.Errorf("%q: string not closed", s)
			}
			args = append(args, arg{lit: s[i+1 : i+1+j]})
			i += j + 2
		case '$':
			r, n, err := parseRef(s[i:])
			if err != nil {
				return nil, 0, err
			}
			if r == nil {
				return nil, 0, fmt.Errorf("%q: an argument is a string or a $input, $util, $context reference", s[i:])
			}
			args = append(args, arg{ref: r})
			i += n
		default:
			return nil, 0, fmt.Errorf("%q: an argument is a string or a reference", s[i:])
		}
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		if i < len(s) && s[i] == ')' {
			return args, i + 1, nil
		}
		return nil, 0, fmt.Errorf("%q: arguments not closed with )", s)
	}
}

var contextNames = map[string]bool{"requestId": true, "stage": true, "httpMethod": true, "resourcePath": true,
	"path": true, "apiId": true, "accountId": true, "requestTimeEpoch": true, "extendedRequestId": true}

func (r *ref) check() error {
	n := len(r.args)
	ok := false
	switch r.root {
	case "input":
		switch r.name {
		case "json", "params":
			ok = n == 1
		case "body":
			ok = r.args == nil
		}
	case "util":
		switch r.name {
		case "escapeJavaScript", "base64Encode", "base64Decode", "urlEncode", "urlDecode":
			ok = n == 1
		}
	case "context":
		ok = contextNames[r.name] && r.args == nil
	case "stageVariables":
		ok = r.args == nil
	}
	if !ok {
		return fmt.Errorf("%q: not served here (only $input.json('$'), $input.body, $input.params('name'), $util.escapeJavaScript/base64Encode/base64Decode/urlEncode/urlDecode(x), $context.requestId and the like, $stageVariables.name)", r.src)
	}
	for _, m := range r.methods {
		switch m.name {
		case "replaceAll", "replace":
			if len(m.args) != 2 {
				return fmt.Errorf("%q: %s takes two arguments", r.src, m.name)
			}
			if m.name == "replaceAll" {
				if m.args[0].ref != nil {
					return fmt.Errorf("%q: replaceAll's pattern must be a string", r.src)
				}
				if _, err := regexp.Compile(m.args[0].lit); err != nil {
					return fmt.Errorf("%q: replaceAll's pattern: %w", r.src, err)
				}
				if strings.ContainsAny(m.args[1].lit, `$\`) {
					return fmt.Errorf("%q: replaceAll's replacement may not use $ groups or \\ escapes here", r.src)
				}
			}
		case "toLowerCase", "toUpperCase", "trim":
			if len(m.args) != 0 {
				return fmt.Errorf("%q: %s takes no arguments", r.src, m.name)
			}
		default:
			return fmt.Errorf("%q: method %s is not served here (replaceAll, replace, toLowerCase, toUpperCase, trim)", r.src, m.name)
		}
	}
	return nil
}

// request is what a template reads of a request.
type request struct {
	body    []byte
	parsed  any // the body as JSON, once read
	params  map[string]string
	query   map[string]string
	header  func(string) string
	context map[string]string
}

// BadBodyError is a body a template's $input.json cannot read.
type BadBodyError struct{ Err error }

func (e *BadBodyError) Error() string {
	return "Could not parse request body into json: " + e.Err.Error()
}

func (t template) render(req *request) (string, error) {
	var out strings.Builder
	for _, n := range t {
		if n.ref == nil {
			out.WriteString(n.text)
			continue
		}
		s, err := n.ref.eval(req)
		if err != nil {
			return "", err
		}
		out.WriteString(s)
	}
	return out.String(), nil
}

func (a arg) eval(req *request) (string, error) {
	if a.ref != nil {
		return a.ref.eval(req)
	}
	return a.lit, nil
}

func (r *ref) eval(req *request) (string, error) {
	var args []string
	for _, a := range r.args {
		s, err := a.eval(req)
		if err != nil {
			return "", err
		}
		args = append(args, s)
	}
	var s string
	switch r.root + "." + r.name {
	case "input.body":
		s = string(req.body)
	case "input.json":
		v, err := req.json()
		if err != nil {
			return "", err
		}
		if v, ok := jsonPath(v, args[0]); ok {
			var b strings.Builder
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				return "", err
			}
			s = strings.TrimSuffix(b.String(), "\n")
		}
	case "input.params":
		if v, ok := req.params[args[0]]; ok {
			s = v
		} else if v, ok := req.query[args[0]]; ok {
			s = v
		} else if req.header != nil {
			s = req.header(args[0])
		}
	case "util.escapeJavaScript":
		s = escapeJavaScript(args[0])
	case "util.base64Encode":
		s = base64.StdEncoding.EncodeToString([]byte(args[0]))
	case "util.base64Decode":
		b, err := base64.StdEncoding.DecodeString(args[0])
		if err != nil {
			return "", fmt.Errorf("%s: %w", r.src, err)
		}
		s = string(b)
	case "util.urlEncode":
		s = url.QueryEscape(args[0])
	case "util.urlDecode":
		d, err := url.QueryUnescape(args[0])
		if err != nil {
			return "", fmt.Errorf("%s: %w", r.src, err)
		}
		s = d
	default:
		if r.root == "context" {
			s = req.context[r.name]
		} // stageVariables: none are set here
	}
	for _, m := range r.methods {
		var margs []string
		for _, a := range m.args {
			v, err := a.eval(req)
			if err != nil {
				return "", err
			}
			margs = append(margs, v)
		}
		switch m.name {
		case "replaceAll":
			s = regexp.MustCompile(margs[0]).ReplaceAllLiteralString(s, margs[1])
		case "replace":
			s = strings.ReplaceAll(s, margs[0], margs[1])
		case "toLowerCase":
			s = strings.ToLower(s)
		case "toUpperCase":
			s = strings.ToUpper(s)
		case "trim":
			s = strings.TrimSpace(s)
		}
	}
	return s, nil
}

func (req *request) json() (any, error) {
	if req.parsed != nil {
		return req.parsed, nil
	}
	if len(strings.TrimSpace(string(req.body))) == 0 {
		req.parsed = map[string]any{} // an empty body is {}
		return req.parsed, nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(req.body)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, &BadBodyError{Err: err}
	}
	if dec.More() {
		return nil, &BadBodyError{Err: errors.New("more than one JSON value")}
	}
	req.parsed = v
	if v == nil {
		req.parsed = jsonNull{}
	}
	return req.parsed, nil
}

type jsonNull struct{}

func (jsonNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// jsonPath reads $ or $.a.b of v.
func jsonPath(v any, path string) (any, bool) {
	if path != "$" && !strings.HasPrefix(path, "$.") {
		return nil, false
	}
	if path == "$" {
		return v, true
	}
	for _, k := range strings.Split(path[2:], ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// escapeJavaScript escapes s as API Gateway's $util.escapeJavaScript
// does (Apache Commons Lang's): quotes, backslash and slash with a
// backslash, control characters and every character beyond ASCII as
// \uXXXX.
func escapeJavaScript(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\'', '"', '\\', '/':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\b':
			b.WriteString(`\b`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			switch {
			case r < 0x20 || r > 0x7f && r <= 0xffff:
				fmt.Fprintf(&b, `\u%04X`, r)
			case r > 0xffff:
				hi, lo := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04X\u%04X`, hi, lo)
			default:
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}
