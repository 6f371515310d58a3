package jsonata

import (
	"regexp"
	"strings"

	"stepwise/jsonvalue"
)

type sigParam struct {
	regex    string
	typ      string
	array    bool
	context  bool
	ctxRegex *regexp.Regexp
	subtype  string
}

type signature struct {
	params []*sigParam
	regex  *regexp.Regexp
	text   string
}

func closingBracket(s string, start int, open, close byte) int {
	depth := 1
	for i := start + 1; i < len(s); i++ {
		if s[i] == open {
			depth++
		} else if s[i] == close {
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(s) - 1
}

// parseSignature parses a function signature such as "<s-n?:s>".
func parseSignature(sig string, pos int) (*signature, error) {
	var params []*sigParam
	param := &sigParam{}
	var prev *sigParam = param
	next := func() {
		params = append(params, param)
		prev = param
		param = &sigParam{}
	}
	for i := 1; i < len(sig); i++ {
		c := sig[i]
		if c == ':' || c == '>' {
			break
		}
		switch c {
		case 's', 'n', 'b', 'l', 'o':
			param.regex = "[" + string(c) + "m]"
			param.typ = string(c)
			next()
		case 'a':
			param.regex = "[asnblfom]"
			param.typ = "a"
			param.array = true
			next()
		case 'f':
			param.regex = "f"
			param.typ = "f"
			next()
		case 'j':
			param.regex = "[asnblom]"
			param.typ = "j"
			next()
		case 'x':
			param.regex = "[asnblfom]"
			param.typ = "x"
			next()
		case '-':
			prev.context = true
			prev.ctxRegex = regexp.MustCompile("^" + prev.regex + "$")
			prev.regex += "?"
		case '?', '+':
			prev.regex += string(c)
		case '(':
			end := closingBracket(sig, i, '(', ')')
			choice := sig[i+1 : end]
			if strings.Contains(choice, "<") {
				return nil, newErr("S0402", pos+i, "", "Choice groups containing parameterized types are not supported")
			}
			param.regex = "[" + choice + "m]"
			param.typ = "(" + choice + ")"
			i = end
			next()
		case '<':
			if prev.typ == "a" || prev.typ == "f" {
				end := closingBracket(sig, i, '<', '>')
				prev.subtype = sig[i+1 : end]
				i = end
			} else {
				return nil, newErr("S0401", pos+i, prev.typ, "Type parameters can only be applied to functions and arrays")
			}
		}
	}
	var sb strings.Builder
	sb.WriteString("^")
	for _, p := range params {
		sb.WriteString("(" + p.regex + ")")
	}
	sb.WriteString("$")
	re, err := regexp.Compile(sb.String())
	if err != nil {
		return nil, newErr("S0401", pos, "", "Invalid signature")
	}
	return &signature{params: params, regex: re, text: sig}, nil
}

func mustSig(s string) *signature {
	sig, err := parseSignature(s, 0)
	if err != nil {
		panic(err)
	}
	return sig
}

func symbolOf(v any) byte {
	if isFunction(v) {
		return 'f'
	}
	switch v.(type) {
	case string:
		return 's'
	case float64:
		return 'n'
	case bool:
		return 'b'
	case nullT:
		return 'l'
	case *arr:
		return 'a'
	case *jsonvalue.Object:
		return 'o'
	}
	return 'm'
}

// validate checks args against the signature, inserting the context value
// and wrapping singletons into arrays where required.
func (s *signature) validate(args []any, context any, pos int) ([]any, error) {
	sup := make([]byte, len(args))
	for i, a := range args {
		sup[i] = symbolOf(a)
	}
	m := s.regex.FindStringSubmatch(string(sup))
	if m == nil {
		return nil, s.validationError(args, string(sup), pos)
	}
	var out []any
	argIndex := 0
	for i, p := range s.params {
		match := m[i+1]
		if match == "" {
			if p.context && p.ctxRegex != nil {
				if p.ctxRegex.MatchString(string(symbolOf(context))) {
					out = append(out, context)
				} else {
					return nil, &Error{Code: "T0411", Position: pos, Message: "Context value is not a compatible type with argument " + itoa(argIndex+1)}
				}
			} else {
				var a any
				if argIndex < len(args) {
					a = args[argIndex]
				}
				out = append(out, a)
				argIndex++
			}
			continue
		}
		for _, single := range []byte(match) {
			a := args[argIndex]
			if p.typ == "a" {
				if single == 'm' {
					a = nil
				} else {
					ok := true
					if p.subtype != "" {
						if single != 'a' && match != p.subtype {
							ok = false
						} else if single == 'a' {
							av := a.(*arr)
							if len(av.v) > 0 {
								it := symbolOf(av.v[0])
								if string(it) != p.subtype[:1] {
									ok = false
								} else {
									for _, x := range av.v {
										if symbolOf(x) != it {
											ok = false
										}
									}
								}
							}
						}
					}
					if !ok {
						return nil, &Error{Code: "T0412", Position: pos, Message: "Argument " + itoa(argIndex+1) + " of function must be an array of " + p.subtype}
					}
					if single != 'a' {
						a = &arr{v: []any{a}}
					}
				}
			}
			out = append(out, a)
			argIndex++
		}
	}
	return out, nil
}

func (s *signature) validationError(args []any, bad string, pos int) error {
	partial := "^"
	goodTo := 0
	for _, p := range s.params {
		partial += p.regex
		m := regexp.MustCompile(partial).FindString(bad)
		if !regexp.MustCompile(partial).MatchString(bad) {
			return &Error{Code: "T0410", Position: pos, Message: "Argument " + itoa(goodTo+1) + " of function does not match function signature"}
		}
		goodTo = len(m)
	}
	return &Error{Code: "T0410", Position: pos, Message: "Argument " + itoa(goodTo+1) + " of function does not match function signature"}
}
