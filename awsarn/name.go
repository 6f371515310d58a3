package awsarn

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ValidName reports whether a state machine, execution or activity name
// avoids the characters AWS forbids: white space, brackets < > { } [ ],
// wildcards ? *, the special characters " # % \ ^ | ~ ` $ & , ; : / and
// control characters (U+0000-001F, U+007F-009F). A name must also be
// Unicode text: an unpaired surrogate, which the transport keeps in a
// name as it was sent (in WTF-8 form, not valid UTF-8), is refused too.
// The service checks the names of its requests with it, and the engine
// the name a states:startExecution Task gives its child.
func ValidName(name string) bool {
	for _, r := range name {
		switch {
		case r == utf8.RuneError:
			if !utf8.ValidString(name) {
				return false
			}
		case unicode.IsSpace(r):
			return false
		case r <= 0x1f, r >= 0x7f && r <= 0x9f:
			return false
		case strings.ContainsRune(`<>{}[]?*"#%\^|~`+"`"+`$&,;:/`, r):
			return false
		}
	}
	return true
}
