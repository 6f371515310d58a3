package workflowtest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"stepwise/jsonvalue"
)

// diffExact returns the first difference between the value wanted and
// the value got, at "at" (a path such as output.items[2]); "" when they
// are equal. Objects are equal whatever their members' order, numbers
// by value (1 equals 1.0).
func diffExact(at string, want, got any) string {
	return diff(at, want, got, false)
}

// diffSubset is diffExact where want is a part of got: an object's members
// not in want are not looked at, recursively; arrays are matched element
// by element, and must be as long.
func diffSubset(at string, want, got any) string {
	return diff(at, want, got, true)
}

func diff(at string, want, got any, subset bool) string {
	switch w := want.(type) {
	case *jsonvalue.Object:
		g, ok := got.(*jsonvalue.Object)
		if !ok {
			return mismatch(at, want, got)
		}
		for k, wv := range w.All() {
			gv, ok := g.Get(k)
			if !ok {
				return fmt.Sprintf("%s: expected %s, got no such member", member(at, k), show(wv))
			}
			if d := diff(member(at, k), wv, gv, subset); d != "" {
				return d
			}
		}
		if !subset {
			for k, gv := range g.All() {
				if !w.Has(k) {
					return fmt.Sprintf("%s: unexpected member, got %s", member(at, k), show(gv))
				}
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return mismatch(at, want, got)
		}
		for i := 0; i < len(w) && i < len(g); i++ {
			if d := diff(fmt.Sprintf("%s[%d]", at, i), w[i], g[i], subset); d != "" {
				return d
			}
		}
		switch {
		case len(w) < len(g):
			return fmt.Sprintf("%s: expected %s, got %s (%s[%d] is %s)", at, elements(len(w)), elements(len(g)), at, len(w), show(g[len(w)]))
		case len(w) > len(g):
			return fmt.Sprintf("%s: expected %s, got %s (%s[%d] should be %s)", at, elements(len(w)), elements(len(g)), at, len(g), show(w[len(g)]))
		}
		return ""
	}
	if !jsonvalue.Equal(want, got) {
		return mismatch(at, want, got)
	}
	return ""
}

func mismatch(at string, want, got any) string {
	return fmt.Sprintf("%s: expected %s, got %s", at, show(want), show(got))
}

func elements(n int) string {
	if n == 1 {
		return "1 element"
	}
	return strconv.Itoa(n) + " elements"
}

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

// member is the path of an object's member.
func member(at, key string) string {
	if identifier.MatchString(key) {
		return at + "." + key
	}
	return at + "[" + strconv.Quote(key) + "]"
}

// maxShown is the most characters of a value a message shows.
const maxShown = 200

// show is a value's JSON text, cut short when long.
func show(v any) string {
	return clip(jsonvalue.String(v), maxShown)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// showNames is a list of state names as the go tool shows a slice.
func showNames(names []string) string {
	return "[" + strings.Join(names, " ") + "]"
}
