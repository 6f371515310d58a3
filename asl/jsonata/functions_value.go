package jsonata

import (
	"encoding/base64"
	"math"
	"math/rand/v2"
	"sort"
	"time"
	"unicode/utf16"

	"stepwise/jsonvalue"
)

// valueBuiltins are the rest of the built-in functions: on values of any
// type, arrays, objects, higher-order functions, dates and formatting.
var valueBuiltins = []builtin{
	{"exists", "<x:b>", func(c *callCtx, a []any) (any, error) { return a[0] != nil, nil }},
	{"type", "<x:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		return typeOf(a[0]), nil
	}},
	{"append", "<xx:a>", func(c *callCtx, a []any) (any, error) { return fnAppend(a[0], a[1]), nil }},
	{"reverse", "<a:a>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		src := a[0].(*arr).v
		out := &arr{v: make([]any, len(src))}
		for i, x := range src {
			out.v[len(src)-1-i] = x
		}
		return out, nil
	}},
	{"shuffle", "<a:a>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		out := &arr{v: append([]any(nil), a[0].(*arr).v...)}
		rand.Shuffle(len(out.v), func(i, j int) { out.v[i], out.v[j] = out.v[j], out.v[i] })
		return out, nil
	}},
	{"distinct", "<x:x>", func(c *callCtx, a []any) (any, error) {
		in, ok := a[0].(*arr)
		if !ok || len(in.v) <= 1 {
			return a[0], nil
		}
		out := &arr{sequence: in.sequence} // a plain array stays one
	outer:
		for _, x := range in.v {
			for _, y := range out.v {
				if deepEqual(x, y) {
					continue outer
				}
			}
			out.push(x)
		}
		return out, nil
	}},
	{"sort", "<af?:a>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		items := append([]any(nil), a[0].(*arr).v...)
		if len(items) <= 1 {
			return &arr{v: items}, nil
		}
		if a[1] == nil {
			allNum, allStr := true, true
			for _, x := range items {
				if !isNum(x) {
					allNum = false
				}
				if !isStr(x) {
					allStr = false
				}
			}
			if !allNum && !allStr {
				return nil, argErr("D3070", c, "The single argument form of the sort function can only be applied to an array of strings or an array of numbers")
			}
			sort.SliceStable(items, func(i, j int) bool {
				if allNum {
					return items[i].(float64) < items[j].(float64)
				}
				return cmpStr(items[i].(string), items[j].(string)) < 0
			})
			return &arr{v: items}, nil
		}
		var err error
		sorted, err := mergeSort(items, func(x, y any) (bool, error) {
			r, err := c.call(a[1], x, y)
			if err != nil {
				return false, err
			}
			return toBool(r), nil
		})
		if err != nil {
			return nil, err
		}
		return &arr{v: sorted}, nil
	}},
	{"keys", "<x-:a<s>>", func(c *callCtx, a []any) (any, error) {
		out := newSeq()
		seen := map[string]bool{}
		add := func(o *jsonvalue.Object) {
			for _, k := range o.Keys() {
				if !seen[k] {
					seen[k] = true
					out.push(k)
				}
			}
		}
		switch t := a[0].(type) {
		case *arr:
			for _, x := range t.v {
				if o, ok := x.(*jsonvalue.Object); ok {
					add(o)
				}
			}
		case *jsonvalue.Object:
			add(t)
		}
		return out, nil
	}},
	{"lookup", "<x-s:x>", func(c *callCtx, a []any) (any, error) { return lookup(a[0], jsStringArg(a[1])), nil }},
	{"spread", "<x-:a<o>>", func(c *callCtx, a []any) (any, error) { return spread(a[0]), nil }},
	{"merge", "<a<o>:o>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		out := jsonvalue.NewObject(4)
		for _, x := range a[0].(*arr).v {
			for k, v := range x.(*jsonvalue.Object).All() {
				out.Set(k, v)
			}
		}
		return out, nil
	}},
	{"each", "<o-f:a>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		o := a[0].(*jsonvalue.Object)
		out := newSeq()
		for k, v := range o.All() {
			r, err := c.call(a[1], hofArgs(a[1], v, k, o)...)
			if err != nil {
				return nil, err
			}
			if r != nil {
				out.push(r)
			}
		}
		return out, nil
	}},
	{"sift", "<o-f?:o>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		o := a[0].(*jsonvalue.Object)
		out := jsonvalue.NewObject(o.Len())
		for k, v := range o.All() {
			r, err := c.call(a[1], hofArgs(a[1], v, k, o)...)
			if err != nil {
				return nil, err
			}
			if toBool(r) {
				out.Set(k, v)
			}
		}
		if out.Len() == 0 {
			return nil, nil
		}
		return out, nil
	}},
	{"map", "<af>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		in := a[0].(*arr)
		out := newSeq()
		for i, x := range in.v {
			r, err := c.call(a[1], hofArgs(a[1], x, float64(i), in)...)
			if err != nil {
				return nil, err
			}
			if r != nil {
				out.push(r)
			}
		}
		return out, nil
	}},
	{"filter", "<af>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		in := a[0].(*arr)
		out := newSeq()
		for i, x := range in.v {
			r, err := c.call(a[1], hofArgs(a[1], x, float64(i), in)...)
			if err != nil {
				return nil, err
			}
			if toBool(r) {
				out.push(x)
			}
		}
		return out, nil
	}},
	{"single", "<af?>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		in := a[0].(*arr)
		var found any
		n := 0
		for i, x := range in.v {
			ok := true
			if a[1] != nil {
				r, err := c.call(a[1], hofArgs(a[1], x, float64(i), in)...)
				if err != nil {
					return nil, err
				}
				ok = toBool(r)
			}
			if ok {
				n++
				if n > 1 {
					return nil, argErr("D3138", c, "The $single() function expected exactly 1 matching result.  Instead it matched more.")
				}
				found = x
			}
		}
		if n == 0 {
			return nil, argErr("D3139", c, "The $single() function expected exactly 1 matching result.  Instead it matched 0.")
		}
		return found, nil
	}},
	{"reduce", "<afj?:j>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		if arity(a[1]) < 2 {
			return nil, argErr("D3050", c, "The second argument of reduce function must be a function with at least two arguments")
		}
		in := a[0].(*arr)
		acc := a[2]
		start := 0
		if acc == nil && len(in.v) > 0 {
			acc = in.v[0]
			start = 1
		}
		for i := start; i < len(in.v); i++ {
			args := []any{acc, in.v[i]}
			if arity(a[1]) >= 3 {
				args = append(args, float64(i))
			}
			if arity(a[1]) >= 4 {
				args = append(args, in)
			}
			r, err := c.call(a[1], args...)
			if err != nil {
				return nil, err
			}
			acc = r
		}
		return acc, nil
	}},
	{"zip", "<a+>", func(c *callCtx, a []any) (any, error) {
		out := &arr{}
		n := math.MaxInt
		for _, x := range a {
			if x == nil {
				n = 0
				continue
			}
			n = min(n, len(x.(*arr).v))
		}
		if len(a) == 0 {
			n = 0
		}
		for i := 0; i < n; i++ {
			t := &arr{}
			for _, x := range a {
				t.push(x.(*arr).v[i])
			}
			out.push(t)
		}
		return out, nil
	}},
	{"error", "<s?:x>", func(c *callCtx, a []any) (any, error) {
		msg := "$error() function evaluated"
		if a[0] != nil {
			msg = a[0].(string)
		}
		return nil, argErr("D3137", c, msg)
	}},
	{"assert", "<bs?:x>", func(c *callCtx, a []any) (any, error) {
		if ok, _ := a[0].(bool); !ok { // undefined fails too, as in jsonata.js
			msg := "$assert() statement failed"
			if a[1] != nil {
				msg = a[1].(string)
			}
			return nil, argErr("D3141", c, msg)
		}
		return nil, nil
	}},
	{"base64encode", "<s-:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		// Buffer.from(str, 'binary'): the low byte of each UTF-16 unit.
		units := utf16.Encode([]rune(a[0].(string)))
		b := make([]byte, len(units))
		for i, u := range units {
			b[i] = byte(u)
		}
		return base64.StdEncoding.EncodeToString(b), nil
	}},
	{"base64decode", "<s-:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		// Buffer.from(str, 'base64').toString('binary'): lenient about
		// padding and stray characters, each byte one character.
		var clean []byte
		for _, r := range a[0].(string) {
			switch {
			case r == '=':
				goto decode
			case r == '-':
				clean = append(clean, '+')
			case r == '_':
				clean = append(clean, '/')
			case r < 128 && (r == '+' || r == '/' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z'):
				clean = append(clean, byte(r))
			}
		}
	decode:
		if len(clean)%4 == 1 {
			clean = clean[:len(clean)-1]
		}
		b, err := base64.RawStdEncoding.DecodeString(string(clean))
		if err != nil {
			return nil, argErr("D3137", c, "invalid base64")
		}
		rs := make([]rune, len(b))
		for i, x := range b {
			rs[i] = rune(x)
		}
		return string(rs), nil
	}},
	{"encodeUrlComponent", "<s-:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		return jsEncode(a[0].(string), "-_.!~*'()"), nil
	}},
	{"encodeUrl", "<s-:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		return jsEncode(a[0].(string), "-_.!~*'();/?:@&=+$,#"), nil
	}},
	{"decodeUrlComponent", "<s-:s>", decodeURL},
	{"decodeUrl", "<s-:s>", decodeURL},
	{"clone", "<(oa)-:o>", func(c *callCtx, a []any) (any, error) { return deepClone(a[0]), nil }},
	{"now", "<s?s?:s>", func(c *callCtx, a []any) (any, error) {
		t := c.ev.clock()
		if a[0] != nil || a[1] != nil {
			return formatDateTime(c, float64(t.UnixMilli()), a[0], a[1])
		}
		return t.UTC().Format("2006-01-02T15:04:05.000Z"), nil
	}},
	{"millis", "<:n>", func(c *callCtx, a []any) (any, error) { return float64(c.ev.clock().UnixMilli()), nil }},
	{"fromMillis", "<n-s?s?:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		return formatDateTime(c, a[0].(float64), a[1], a[2])
	}},
	{"toMillis", "<s-s?:n>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		if pic, ok := a[1].(string); ok {
			return parseDateTime(c, a[0].(string), pic)
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05Z0700", "2006-01-02", "2006-01", "2006"} {
			if t, err := time.Parse(layout, a[0].(string)); err == nil {
				return float64(t.UnixMilli()), nil
			}
		}
		return nil, argErr("D3110", c, "Failed to parse date")
	}},
	{"formatBase", "<n-n?:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		v := roundHalfEven(a[0].(float64), 0)
		radix := 10
		if a[1] != nil {
			radix = int(a[1].(float64))
		}
		if radix < 2 || radix > 36 {
			return nil, argErr("D3100", c, "The radix of the formatBase function must be between 2 and 36")
		}
		return jsIntegerToRadix(v, radix), nil
	}},
	{"formatInteger", "<n-s:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		pic, ok := a[1].(string)
		if !ok {
			return nil, undefinedPicture(c)
		}
		return formatInteger(c, a[0].(float64), pic)
	}},
	{"parseInteger", "<s-s:n>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		pic, ok := a[1].(string)
		if !ok {
			return nil, undefinedPicture(c)
		}
		return parseInteger(c, a[0].(string), pic)
	}},
	{"formatNumber", "<n-so?:s>", func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		pic, ok := a[1].(string)
		if !ok {
			return nil, undefinedPicture(c)
		}
		return formatPicture(c, a[0].(float64), pic, a[2])
	}},
}
