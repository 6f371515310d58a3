package jsonvalue

// Equal reports whether a and b are the same JSON value: object member order
// does not matter and numbers compare by value (1 equals 1.0).
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case Number:
		y, ok := b.(Number)
		return ok && CompareNumbers(x, y) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for k, v := range x.All() {
			w, ok := y.Get(k)
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	default:
		return false
	}
}

// CompareNumbers compares two numbers by value: -1, 0 or +1.
func CompareNumbers(a, b Number) int {
	if a == b {
		return 0
	}
	if ai, ok := parseSmallInt(string(a)); ok {
		if bi, ok := parseSmallInt(string(b)); ok {
			switch {
			case ai < bi:
				return -1
			case ai > bi:
				return 1
			}
			return 0
		}
	}
	return a.Rat().Cmp(b.Rat())
}

// parseSmallInt parses plain integers of up to 18 digits without allocating.
func parseSmallInt(s string) (int64, bool) {
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg = true
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// EqualText reports whether two JSON texts hold equal values; text that
// does not parse equals only itself.
func EqualText(a, b string) bool {
	if a == b {
		return true
	}
	va, err := ParseString(a)
	if err != nil {
		return false
	}
	vb, err := ParseString(b)
	if err != nil {
		return false
	}
	return Equal(va, vb)
}
