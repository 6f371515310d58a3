package asl

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"stepwise/jsonvalue"
)

// Step Functions reads definitions with Jackson and reports malformed JSON
// in Jackson's words, with the location written as Jackson writes it:
//
//	Unrecognized token 'not': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')
//	 at [Source: (String)"not a definition"; line: 1, column: 4]
//
// jsonSyntax finds the first syntax error the way Jackson's reader does and
// words it the same way. It covers the errors a hand-written definition
// runs into; anything else falls back to the message of jsonvalue.Parse.

// jacksonMaxSnippet is how much of the text Jackson quotes in a location.
const jacksonMaxSnippet = 500

// jacksonMaxToken is the longest token Jackson quotes in an error.
const jacksonMaxToken = 256

const jacksonValueList = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"

type syntaxScanner struct {
	data  []byte
	pos   int
	msg   string // the first error, once found
	errAt int    // byte offset the error's location points at
}

// jsonSyntaxDiagnostic returns the INVALID_JSON_DESCRIPTION diagnostic for
// data, which jsonvalue.Parse rejected with parseErr.
func jsonSyntaxDiagnostic(data []byte, parseErr error) Diagnostic {
	s := &syntaxScanner{data: data}
	s.skipSpace()
	s.value(0, 0, 0)
	if s.msg == "" {
		// Not a Jackson error (invalid UTF-8, trailing data...): say what
		// the parser said.
		msg := parseErr.Error()
		var se *jsonvalue.SyntaxError
		if errors.As(parseErr, &se) {
			loc := s.location(se.Offset)
			return errInvalidJSON(se.Msg+"\n at "+loc, loc)
		}
		return errInvalidJSON(msg, "")
	}
	loc := s.location(s.errAt)
	return errInvalidJSON(s.msg+"\n at "+loc, loc)
}

// location renders a Jackson location for byte offset off.
func (s *syntaxScanner) location(off int) string {
	if off > len(s.data) {
		off = len(s.data)
	}
	line, col := 1, 1
	for i := 0; i < off; {
		r, n := utf8.DecodeRune(s.data[i:])
		switch r {
		case '\n':
			line++
			col = 1
		case '\r':
			if i+1 < len(s.data) && s.data[i+1] == '\n' && i+1 < off {
				i++
			}
			line++
			col = 1
		default:
			col++
			if r > 0xFFFF {
				col++ // Jackson counts UTF-16 units
			}
		}
		i += n
	}
	return fmt.Sprintf("[Source: %s; line: %d, column: %d]", s.source(), line, col)
}

func (s *syntaxScanner) source() string {
	text := string(s.data)
	if n := utf8.RuneCountInString(text); n > jacksonMaxSnippet {
		cut := 0
		for i := range text {
			if cut == jacksonMaxSnippet {
				return "(String)\"" + text[:i] + "\"[truncated " + strconv.Itoa(n-jacksonMaxSnippet) + " chars]"
			}
			cut++
		}
	}
	return "(String)\"" + text + "\""
}

func (s *syntaxScanner) fail(at int, format string, args ...any) {
	if s.msg == "" {
		s.msg = fmt.Sprintf(format, args...)
		s.errAt = at
	}
}

func (s *syntaxScanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// charDesc describes a character the way Jackson does.
func charDesc(r rune) string {
	switch {
	case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		return fmt.Sprintf("(CTRL-CHAR, code %d)", r)
	case r > 255:
		return fmt.Sprintf("'%c' (code %d / 0x%x)", r, r, r)
	default:
		return fmt.Sprintf("'%c' (code %d)", r, r)
	}
}

func (s *syntaxScanner) peekRune() (rune, int) {
	return utf8.DecodeRune(s.data[s.pos:])
}

// unexpected reports the character at s.pos, consuming it as Jackson does.
func (s *syntaxScanner) unexpected(what string) {
	r, n := s.peekRune()
	s.fail(s.pos+n, "Unexpected character (%s): %s", charDesc(r), what)
}

func isIdentPart(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// invalidToken reports the token starting at start: the part already
// matched plus the identifier characters that follow.
func (s *syntaxScanner) invalidToken(start int) {
	i := start
	var b strings.Builder
	for i < len(s.data) {
		r, n := utf8.DecodeRune(s.data[i:])
		if i > start && !isIdentPart(r) {
			break
		}
		b.WriteRune(r)
		i += n
		if b.Len() >= jacksonMaxToken {
			b.WriteString("...")
			break
		}
	}
	s.fail(i, "Unrecognized token '%s': was expecting %s", b.String(), jacksonValueList)
}

// value scans one value. closeKind is '}' or ']' for the container the
// value is in (0 at the root), opened at byte offset open.
func (s *syntaxScanner) value(depth int, closeKind byte, open int) {
	if s.msg != "" {
		return
	}
	if s.pos >= len(s.data) {
		s.eof(closeKind, open)
		return
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		s.object(depth + 1)
	case c == '[':
		s.array(depth + 1)
	case c == '"':
		s.str()
	case c == '-' || (c >= '0' && c <= '9'):
		s.number()
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	default:
		r, _ := s.peekRune()
		if isIdentPart(r) {
			s.invalidToken(s.pos)
			return
		}
		s.unexpected("expected a valid value " + jacksonValueList)
	}
}

func (s *syntaxScanner) eof(closeKind byte, open int) {
	switch closeKind {
	case '}':
		s.fail(len(s.data), "Unexpected end-of-input: expected close marker for Object (start marker at %s)", s.location(open))
	case ']':
		s.fail(len(s.data), "Unexpected end-of-input: expected close marker for Array (start marker at %s)", s.location(open))
	default:
		s.fail(len(s.data), "No content to map due to end-of-input")
	}
}

func (s *syntaxScanner) literal(word string) {
	start := s.pos
	for i := 0; i < len(word); i++ {
		if s.pos >= len(s.data) || s.data[s.pos] != word[i] {
			s.invalidToken(start)
			return
		}
		s.pos++
	}
	if s.pos < len(s.data) {
		if r, _ := s.peekRune(); isIdentPart(r) {
			s.invalidToken(start)
		}
	}
}

func (s *syntaxScanner) number() {
	if s.data[s.pos] == '-' {
		s.pos++
		if s.pos >= len(s.data) || s.data[s.pos] < '0' || s.data[s.pos] > '9' {
			s.numberChar("expected digit (0-9) to follow minus sign, for valid numeric value")
			return
		}
	}
	if s.data[s.pos] == '0' && s.pos+1 < len(s.data) && s.data[s.pos+1] >= '0' && s.data[s.pos+1] <= '9' {
		s.fail(s.pos+1, "Invalid numeric value: Leading zeroes not allowed")
		return
	}
	s.digits()
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if s.digits() == 0 {
			s.numberChar("Decimal point not followed by a digit")
			return
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			s.numberChar("Exponent indicator not followed by a digit")
		}
	}
}

func (s *syntaxScanner) digits() int {
	n := 0
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
		n++
	}
	return n
}

func (s *syntaxScanner) numberChar(what string) {
	if s.pos >= len(s.data) {
		s.fail(s.pos, "Unexpected end-of-input in a Number value")
		return
	}
	r, n := s.peekRune()
	s.fail(s.pos+n, "Unexpected character (%s) in numeric value: %s", charDesc(r), what)
}

func (s *syntaxScanner) str() {
	s.pos++ // opening quote
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return
		case c == '\\':
			s.pos++
			if s.pos >= len(s.data) {
				break
			}
			e := s.data[s.pos]
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos++
			case 'u':
				s.pos++
				for i := 0; i < 4; i++ {
					if s.pos >= len(s.data) {
						break
					}
					h := s.data[s.pos]
					if !strings.ContainsRune("0123456789abcdefABCDEF", rune(h)) {
						s.unexpected("expected a hex-digit for character escape sequence")
						return
					}
					s.pos++
				}
			default:
				r, n := s.peekRune()
				s.fail(s.pos+n, "Unrecognized character escape %s", charDesc(r))
				return
			}
		case c < 0x20:
			s.fail(s.pos+1, "Illegal unquoted character (%s): has to be escaped using backslash to be included in string value", charDesc(rune(c)))
			return
		default:
			s.pos++
		}
	}
	s.fail(len(s.data), "Unexpected end-of-input: was expecting closing quote for a string value")
}

func (s *syntaxScanner) tooDeep(depth int) bool {
	if depth > jsonvalue.DefaultMaxDepth {
		s.fail(s.pos+1, "Document nesting depth (%d) exceeds the maximum allowed (%d, from `StreamReadConstraints.getMaxNestingDepth()`)", depth, jsonvalue.DefaultMaxDepth)
		return true
	}
	return false
}

func (s *syntaxScanner) object(depth int) {
	if s.tooDeep(depth) {
		return
	}
	open := s.pos
	s.pos++
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return
	}
	for s.msg == "" {
		if s.pos >= len(s.data) {
			s.eof('}', open)
			return
		}
		if s.data[s.pos] != '"' {
			s.unexpected("was expecting double-quote to start field name")
			return
		}
		s.str()
		if s.msg != "" {
			return
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			s.eof('}', open)
			return
		}
		if s.data[s.pos] != ':' {
			s.unexpected("was expecting a colon to separate field name and value")
			return
		}
		s.pos++
		s.skipSpace()
		s.value(depth, '}', open)
		if s.msg != "" {
			return
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			s.eof('}', open)
			return
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
			s.skipSpace()
		case '}':
			s.pos++
			return
		case ']':
			s.fail(s.pos+1, "Unexpected close marker ']': expected '}' (for Object starting at %s)", s.location(open))
			return
		default:
			s.unexpected("was expecting comma to separate Object entries")
			return
		}
	}
}

func (s *syntaxScanner) array(depth int) {
	if s.tooDeep(depth) {
		return
	}
	open := s.pos
	s.pos++
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return
	}
	for s.msg == "" {
		s.value(depth, ']', open)
		if s.msg != "" {
			return
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			s.eof(']', open)
			return
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
			s.skipSpace()
		case ']':
			s.pos++
			return
		case '}':
			s.fail(s.pos+1, "Unexpected close marker '}': expected ']' (for Array starting at %s)", s.location(open))
			return
		default:
			s.unexpected("was expecting comma to separate Array entries")
			return
		}
	}
}
