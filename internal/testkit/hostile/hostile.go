// Package hostile makes the hostile inputs the tests of the readers of
// user-named files give them: a YAML alias bomb, a FIFO no one writes.
package hostile

import "strings"

// AliasBomb is a YAML mapping of a few hundred bytes whose last key, "i",
// expands to 9⁹ strings: nine levels of nine aliases.
func AliasBomb() string {
	var b strings.Builder
	b.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(n + ": &" + n + " [" + strings.Repeat("*"+prev+",", 8) + "*" + prev + "]\n")
		prev = n
	}
	return b.String()
}
