package jsonvalue

// Equal reports whether a and b are the same JSON value: object member order
// does not matter and numbers compare by value (1 equals 1.0).
func Equal(a, b any) bool { return EqualWith(a, b, numbersEqual) }

func numbersEqual(x, y Number) bool { return CompareNumbers(x, y) == 0 }

// EqualWith is Equal with numbers compared by numbers (called only for two
// numbers of different text): a caller with its own idea of equal
// numbers, such as Java's equals() between its number classes, keeps the
// rest of JSON's equality.
func EqualWith(a, b any, numbers func(x, y Number) bool) bool {
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
		return ok && (x == y || numbers(x, y))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !EqualWith(x[i], y[i], numbers) {
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
			if !ok || !EqualWith(v, w, numbers) {
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
