package intrinsic

var genericFunctions = []*function{
	{name: "States.Format", minArgs: 1, maxArgs: -1, eval: evalFormat},
}

const (
	errNoClosingBrace = "matching '}' not found for '{'."
	errNoOpeningBrace = "matching '{' not found for '}'."
)

// evalFormat replaces each {} of the template with the next argument,
// rendered as Java prints it: strings as they are, null as "null", objects
// as {key=value, ...} and arrays as [a, b]. In the template \{ \} \' and \\
// stand for the character; any other { or } is an error. The number of
// arguments must match the number of {}.
//
// A literal template is read from its source text, escapes included, so
// that '\{}' is a brace followed by } rather than a placeholder.
func evalFormat(c *Call, args []any) (any, error) {
	var tmpl string
	if a := c.args[0]; a.str {
		tmpl = a.raw
	} else {
		s, ok := args[0].(string)
		if !ok {
			return nil, invalidArgs(c)
		}
		tmpl = s
	}
	vals := args[1:]
	n, msg := countPlaceholders(tmpl)
	if msg != "" {
		return nil, &argError{detail: "Invalid template in " + c.fn.name + ": " + msg}
	}
	if n != len(vals) {
		return nil, invalidArgs(c)
	}
	out := make([]byte, 0, len(tmpl)+16*len(vals))
	next := 0
	for i := 0; i < len(tmpl); i++ {
		switch ch := tmpl[i]; ch {
		case '\\':
			if i+1 < len(tmpl) && isTemplateEscape(tmpl[i+1]) {
				i++
				out = append(out, tmpl[i])
				continue
			}
			out = append(out, ch)
		case '{':
			out = appendJavaString(out, vals[next])
			next++
			i++ // the '}'
		default:
			out = append(out, ch)
		}
	}
	return string(out), nil
}

func isTemplateEscape(b byte) bool {
	return b == '{' || b == '}' || b == '\\' || b == '\''
}

// countPlaceholders checks a template and counts its {}.
func countPlaceholders(tmpl string) (int, string) {
	n := 0
	for i := 0; i < len(tmpl); i++ {
		switch tmpl[i] {
		case '\\':
			if i+1 < len(tmpl) && isTemplateEscape(tmpl[i+1]) {
				i++
			}
		case '{':
			if i+1 >= len(tmpl) || tmpl[i+1] != '}' {
				return 0, errNoClosingBrace
			}
			n++
			i++
		case '}':
			return 0, errNoOpeningBrace
		}
	}
	return n, ""
}
