package jsonata

import (
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"stepwise/asl/budget"
	"stepwise/jsonvalue"
)

var baseEnv = &env{builtins: map[string]any{}}

func def(name, sig string, fn func(c *callCtx, args []any) (any, error)) {
	baseEnv.builtins[name] = &native{name: name, sig: mustSig(sig), fn: fn}
}

func utf16Units(s string) []uint16 { return utf16.Encode([]rune(s)) }

func argErr(code string, c *callCtx, msg string) error {
	return &Error{Code: code, Position: c.pos, Message: msg}
}

// maxStringLength is the longest string JavaScript builds (2^29 - 24
// UTF-16 units in V8); longer ones are a RangeError there.
const maxStringLength = 1<<29 - 24

// jsStringArg is a string argument as JavaScript reads it: undefined is
// the text "undefined".
func jsStringArg(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return "undefined"
}

// undefinedPicture is what jsonata.js fails with when a picture string
// is undefined: a JavaScript TypeError, which carries no JSONata code.
func undefinedPicture(c *callCtx) error {
	return argErr("TypeError", c, "Cannot read properties of undefined")
}

// fnString is $string. A value whose JSON text grows past limit bytes is
// a *budget.Error: the text stops growing there.
func fnString(v any, pretty bool, limit int) (string, error) {
	switch t := v.(type) {
	case string:
		return t, nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return "", &Error{Code: "D3001", Message: "Attempting to invoke string function on Infinity or NaN"}
		}
		return formatNumber(t), nil
	}
	if isFunction(v) {
		return "", nil
	}
	var sb strings.Builder
	writeJSON(&sb, v, pretty, "", limit)
	if sb.Len() > limit {
		return "", &budget.Error{Limit: "bytes", Max: int64(limit)}
	}
	return sb.String(), nil
}

func writeJSONString(sb *strings.Builder, s string) {
	sb.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		case '\b':
			sb.WriteString(`\b`)
		case '\f':
			sb.WriteString(`\f`)
		default:
			if r < 0x20 {
				sb.WriteString(`\u00`)
				sb.WriteString(strconv.FormatInt(int64(r)>>4, 16))
				sb.WriteString(strconv.FormatInt(int64(r)&15, 16))
			} else {
				sb.WriteRune(r)
			}
		}
	}
	sb.WriteByte('"')
}

func writeJSON(sb *strings.Builder, v any, pretty bool, indent string, limit int) {
	if sb.Len() > limit {
		return
	}
	switch t := v.(type) {
	case nil, nullT:
		sb.WriteString("null")
	case bool:
		if t {
			sb.WriteString("true")
		} else {
			sb.WriteString("false")
		}
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			// Eval recovers *Error panics; writeJSON has no error path.
			panic(&Error{Code: "D1001", Message: "Number out of range"})
		}
		sb.WriteString(formatNumber(t))
	case string:
		writeJSONString(sb, t)
	case *arr:
		if len(t.v) == 0 {
			sb.WriteString("[]")
			return
		}
		sb.WriteByte('[')
		in := indent + "  "
		for i, x := range t.v {
			if i > 0 {
				sb.WriteByte(',')
			}
			if pretty {
				sb.WriteString("\n" + in)
			}
			if isFunction(x) {
				sb.WriteString(`""`)
			} else {
				writeJSON(sb, x, pretty, in, limit)
			}
		}
		if pretty {
			sb.WriteString("\n" + indent)
		}
		sb.WriteByte(']')
	case *jsonvalue.Object:
		in := indent + "  "
		first := true
		sb.WriteByte('{')
		for k, x := range t.All() {
			if x == nil {
				continue
			}
			if !first {
				sb.WriteByte(',')
			}
			first = false
			if pretty {
				sb.WriteString("\n" + in)
			}
			writeJSONString(sb, k)
			sb.WriteByte(':')
			if pretty {
				sb.WriteByte(' ')
			}
			if isFunction(x) {
				sb.WriteString(`""`)
			} else {
				writeJSON(sb, x, pretty, in, limit)
			}
		}
		if pretty && !first {
			sb.WriteString("\n" + indent)
		}
		sb.WriteByte('}')
	default:
		sb.WriteString(`""`)
	}
}

func asArr(v any) *arr {
	if a, ok := v.(*arr); ok {
		return a
	}
	if v == nil {
		return &arr{}
	}
	return &arr{v: []any{v}}
}

func hofArgs(f any, a ...any) []any {
	n := arity(f)
	if n < 1 {
		n = 1
	}
	if n < len(a) {
		return a[:n]
	}
	return a
}

func roundHalfEven(x float64, prec int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	shift := func(v float64, p int) float64 {
		s := jsNumber(v)
		mant, exp, _ := strings.Cut(s, "e")
		e := 0
		if exp != "" {
			e, _ = strconv.Atoi(exp)
		}
		f, _ := strconv.ParseFloat(mant+"e"+strconv.Itoa(e+p), 64)
		return f
	}
	v := x
	if prec != 0 {
		v = shift(x, prec)
	}
	r := math.Round(v)
	if math.Abs(r-v) == 0.5 && math.Mod(math.Abs(r), 2) == 1 {
		r = r - 1*sign(r-v)
	}
	if prec != 0 {
		r = shift(r, -prec)
	}
	if r == 0 {
		r = 0
	}
	return r
}

func sign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}

func substring(s string, start float64, length any) string {
	rs := []rune(s)
	n := float64(len(rs))
	if n+start < 0 {
		start = 0
	}
	if length != nil {
		l := length.(float64)
		if l <= 0 {
			return ""
		}
		end := n + start + l
		if start >= 0 {
			end = start + l
		}
		return jsSlice(rs, start, end)
	}
	return jsSlice(rs, start, n)
}

// jsSlice is JavaScript's Array.prototype.slice(start, end) joined: both
// truncated, negative ones from the end, NaN as 0.
func jsSlice(rs []rune, start, end float64) string {
	n := float64(len(rs))
	rel := func(x float64) int {
		if math.IsNaN(x) {
			x = 0
		}
		x = math.Trunc(x)
		if x < 0 {
			return int(math.Max(n+x, 0))
		}
		return int(math.Min(x, n))
	}
	a, b := rel(start), rel(end)
	if a >= b {
		return ""
	}
	return string(rs[a:b])
}

var numberRe = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([Ee][-+]?[0-9]+)?$`)

// builtin is a built-in function: the name it is bound as ($name), its
// JSONata signature, and what it does.
type builtin struct {
	name, sig string
	fn        func(c *callCtx, args []any) (any, error)
}

// builtins and valueBuiltins are JSONata's built-in functions, bound in
// every evaluation's base environment; builtins are the numeric, string
// and Boolean ones.
var builtins = []builtin{
	{"sum", "<a<n>:n>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		s := 0.0
		for _, x := range a[0].(*arr).v {
			s += x.(float64)
		}
		return s, nil
	}},
	{"count", "<a:n>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return 0.0, nil
		}
		return float64(len(a[0].(*arr).v)), nil
	}},
	{"max", "<a<n>:n>", minmax(true)},
	{"min", "<a<n>:n>", minmax(false)},
	{"average", "<a<n>:n>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil || len(a[0].(*arr).v) == 0 {
			return nil, nil
		}
		s := 0.0
		for _, x := range a[0].(*arr).v {
			s += x.(float64)
		}
		return s / float64(len(a[0].(*arr).v)), nil
	}},
	{"string", "<x-b?:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		pretty, _ := a[1].(bool)
		s, err := fnString(a[0], pretty, c.ev.remaining())
		if e, ok := err.(*Error); ok {
			e.Position = c.pos
		}
		return s, err
	}},
	{"substring", "<s-nn?:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		start, ok := a[1].(float64)
		if !ok {
			start = math.NaN() // undefined, as JavaScript computes with it
		}
		return substring(a[0].(string), start, a[2]), nil
	}},
	{"substringBefore", "<s-s:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		s, chars := a[0].(string), jsStringArg(a[1])
		if i := strings.Index(s, chars); i >= 0 {
			return s[:i], nil
		}
		return s, nil
	}},
	{"substringAfter", "<s-s:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		s, chars := a[0].(string), jsStringArg(a[1])
		if i := strings.Index(s, chars); i >= 0 {
			return s[i+len(chars):], nil
		}
		return s, nil
	}},
	{"lowercase", "<s-:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		return strings.ToLower(a[0].(string)), nil
	}},
	{"uppercase", "<s-:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		return strings.ToUpper(a[0].(string)), nil
	}},
	{"length", "<s-:n>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		return float64(utf8.RuneCountInString(a[0].(string))), nil
	}},
	{"trim", "<s-:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		s := wsRe.ReplaceAllString(a[0].(string), " ")
		return strings.Trim(s, " "), nil
	}},
	{"pad", "<s-ns?:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		s := a[0].(string)
		wf, ok := a[1].(float64)
		if !ok {
			return s, nil // an undefined width pads nothing
		}
		if math.Abs(wf) > maxStringLength {
			return nil, argErr("RangeError", c, "Invalid string length")
		}
		w := int(wf)
		ch := " "
		if a[2] != nil && a[2].(string) != "" {
			ch = a[2].(string)
		}
		cur := utf8.RuneCountInString(s)
		aw := w
		if aw < 0 {
			aw = -aw
		}
		if cur >= aw {
			return s, nil
		}
		if err := c.ev.meter.Bytes((aw - cur) * len(ch)); err != nil {
			return nil, err
		}
		padRunes := []rune(strings.Repeat(ch, aw-cur+1))[:aw-cur]
		if w > 0 {
			return s + string(padRunes), nil
		}
		return string(padRunes) + s, nil
	}},
	{"contains", "<s-(sf):b>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		s := a[0].(string)
		switch p := a[1].(type) {
		case string:
			return strings.Contains(s, p), nil
		case *regexFn:
			return p.re.MatchString(s), nil
		}
		return false, nil
	}},
	{"split", "<s-(sf)n?:a<s>>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		s := a[0].(string)
		limit := -1
		if a[2] != nil {
			l := a[2].(float64)
			if l < 0 {
				return nil, argErr("D3020", c, "Third argument of split function must evaluate to a positive number")
			}
			limit = int(l)
		}
		var parts []string
		switch p := a[1].(type) {
		case string:
			if p == "" {
				for _, r := range s {
					parts = append(parts, string(r))
				}
			} else {
				parts = strings.Split(s, p)
			}
		case *regexFn:
			parts = p.re.Split(s, -1)
		default:
			return nil, argErr("T1010", c, "unsupported split separator")
		}
		out := &arr{}
		for i, x := range parts {
			if limit >= 0 && i >= limit {
				break
			}
			out.push(x)
		}
		return out, nil
	}},
	{"join", "<a<s>s?:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		sep := ""
		if a[1] != nil {
			sep = a[1].(string)
		}
		var ss []string
		for _, x := range a[0].(*arr).v {
			ss = append(ss, x.(string))
		}
		return strings.Join(ss, sep), nil
	}},
	{"replace", "<s-(sf)(sf)n?:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		s := a[0].(string)
		limit := -1
		if a[3] != nil {
			l := a[3].(float64)
			if l < 0 {
				return nil, argErr("D3011", c, "Fourth argument of replace function must evaluate to a positive number")
			}
			limit = int(l)
		}
		switch p := a[1].(type) {
		case string:
			if p == "" {
				return nil, argErr("D3010", c, "Second argument of replace function cannot be an empty string")
			}
			rep, ok := a[2].(string)
			if !ok {
				return nil, argErr("T0410", c, "Argument 3 of function replace does not match function signature")
			}
			return strings.Replace(s, p, rep, limit), nil
		case *regexFn:
			var sb strings.Builder
			pos := 0
			count := 0
			for pos <= len(s) && (limit < 0 || count < limit) {
				loc := p.re.FindStringSubmatchIndex(s[pos:])
				if loc == nil {
					break
				}
				if loc[0] == loc[1] {
					return nil, argErr("D1004", c, "Regular expression matches zero length string")
				}
				sb.WriteString(s[pos : pos+loc[0]])
				switch r := a[2].(type) {
				case string:
					sb.WriteString(expandReplacement(r, s[pos:], loc))
				default:
					m := regexMatchObj(p.re, s, pos)
					res, err := c.call(r, m)
					if err != nil {
						return nil, err
					}
					rs, ok := res.(string)
					if !ok {
						return nil, argErr("D3012", c, "Attempted to replace a matched string with a non-string value")
					}
					sb.WriteString(rs)
				}
				pos += loc[1]
				count++
			}
			if pos < len(s) {
				sb.WriteString(s[pos:])
			}
			return sb.String(), nil
		}
		return s, nil
	}},
	{"match", "<s-f<s:o>n?:a<o>>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		s := a[0].(string)
		limit := -1
		if a[2] != nil {
			l := a[2].(float64)
			if l < 0 {
				return nil, argErr("D3040", c, "Third argument of match function must evaluate to a positive number")
			}
			limit = int(l)
		}
		re, ok := a[1].(*regexFn)
		if !ok {
			return nil, argErr("T0410", c, "Argument 2 of function match must be a regex")
		}
		out := newSeq()
		for _, loc := range re.re.FindAllStringSubmatchIndex(s, limit) {
			o := jsonvalue.NewObject(3)
			o.Set("match", s[loc[0]:loc[1]])
			o.Set("index", float64(jsonvalue.UTF16Len(s[:loc[0]])))
			g := &arr{}
			for i := 2; i < len(loc); i += 2 {
				if loc[i] < 0 {
					g.push("")
				} else {
					g.push(s[loc[i]:loc[i+1]])
				}
			}
			o.Set("groups", g)
			out.push(o)
		}
		return out, nil
	}},
	{"number", "<(nsb)-:n>", func(c *callCtx, a []any) (any, error) {
		switch t := a[0].(type) {
		case nil:
			return nil, nil
		case float64:
			return t, nil
		case bool:
			if t {
				return 1.0, nil
			}
			return 0.0, nil
		case string:
			if numberRe.MatchString(t) {
				f, _ := strconv.ParseFloat(t, 64)
				if math.IsInf(f, 0) {
					return nil, argErr("D3030", c, "Unable to cast value to a number: "+t)
				}
				return f, nil
			}
			for _, p := range []struct {
				pre  string
				base int
			}{{"0x", 16}, {"0X", 16}, {"0o", 8}, {"0O", 8}, {"0b", 2}, {"0B", 2}} {
				if strings.HasPrefix(t, p.pre) {
					if i, err := strconv.ParseInt(t[2:], p.base, 64); err == nil {
						return float64(i), nil
					}
				}
			}
			return nil, argErr("D3030", c, "Unable to cast value to a number: "+t)
		}
		return nil, argErr("D3030", c, "Unable to cast value to a number")
	}},
	{"abs", "<n-:n>", num1(math.Abs)},
	{"floor", "<n-:n>", num1(math.Floor)},
	{"ceil", "<n-:n>", num1(math.Ceil)},
	{"sqrt", "<n-:n>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		if a[0].(float64) < 0 {
			return nil, argErr("D3060", c, "The sqrt function cannot be applied to a negative number")
		}
		return math.Sqrt(a[0].(float64)), nil
	}},
	{"round", "<n-n?:n>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		p := 0
		if a[1] != nil {
			p = int(a[1].(float64))
		}
		return roundHalfEven(a[0].(float64), p), nil
	}},
	{"power", "<n-n:n>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		exp, ok := a[1].(float64)
		if !ok {
			exp = math.NaN()
		}
		r := math.Pow(a[0].(float64), exp)
		if !isNumeric(r) {
			return nil, argErr("D3061", c, "The power function has resulted in a value that cannot be represented as a JSON number")
		}
		return r, nil
	}},
	{"random", "<:n>", func(c *callCtx, a []any) (any, error) { return rand.Float64(), nil }},
	{"boolean", "<x-:b>", func(c *callCtx, a []any) (any, error) { return fnBoolean(a[0]), nil }},
	{"not", "<x-:b>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		return !toBool(a[0]), nil
	}},
}

func init() {
	for _, b := range append(builtins, valueBuiltins...) {
		def(b.name, b.sig, b.fn)
	}
}
