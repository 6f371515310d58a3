package intrinsic

import (
	"strings"
	"unicode/utf8"
)

var stringFunctions = []*function{
	{name: "States.StringSplit", minArgs: 2, maxArgs: 2, eval: evalStringSplit},
}

// evalStringSplit splits a string the way java.util.StringTokenizer does:
// every character of the delimiter string is a delimiter on its own, and
// empty tokens are dropped. So "a,,b" gives ["a", "b"], "" gives [] and
// "split on T and \nnew line" with delimiter "T\n" gives three tokens.
func evalStringSplit(c *Call, args []any) (any, error) {
	s, ok1 := args[0].(string)
	delims, ok2 := args[1].(string)
	if !ok1 || !ok2 {
		return nil, invalidArgs(c)
	}
	isDelim := func(r rune) bool { return strings.ContainsRune(delims, r) }
	if len(delims) == 1 && delims[0] < utf8.RuneSelf {
		d := rune(delims[0])
		isDelim = func(r rune) bool { return r == d }
	}
	out := make([]any, 0, 4)
	start := -1
	for i, r := range s {
		if isDelim(r) {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out, nil
}
