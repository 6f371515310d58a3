package intrinsic

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"stepwise/jsonvalue"
)

// States.StringToJson parses with Jackson (ObjectMapper.readTree) and AWS
// passes Jackson's error message through. jacksonScan walks the text the
// way Jackson's parser does, to find where the first value ends and, for
// malformed text, to reproduce Jackson's message and location.

const (
	jacksonLocation  = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: %d, column: %d]"
	jacksonValueList = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
	jacksonMaxDepth  = 1000
	jacksonMaxToken  = 256
)

// jacksonScan returns the bounds of the first JSON value in s. For blank
// text start == end; for malformed text msg is Jackson's message.
func jacksonScan(s string) (start, end int, msg string) {
	j := jscan{s: s}
	j.skipSpace()
	if j.pos == len(s) {
		return j.pos, j.pos, ""
	}
	start = j.pos
	if _, msg := j.closer(nil); msg != "" {
		return 0, 0, msg
	}
	if msg := j.value(0, nil); msg != "" {
		return 0, 0, msg
	}
	return start, j.pos, ""
}

type jscan struct {
	s   string
	pos int
}

// container is an open array or object.
type container struct {
	object bool
	open   int // offset of the '[' or '{'
}

func (c *container) desc() string {
	switch {
	case c == nil:
		return "root"
	case c.object:
		return "Object"
	default:
		return "Array"
	}
}

func (j *jscan) skipSpace() {
	for j.pos < len(j.s) {
		switch j.s[j.pos] {
		case ' ', '\t', '\n', '\r':
			j.pos++
		default:
			return
		}
	}
}

// loc renders the location of offset pos: line and 1-based column, both
// counted as Jackson counts them (columns in UTF-16 units).
func (j *jscan) loc(pos int) string {
	return j.locShift(pos, 0)
}

// locShift renders the location of pos moved by shift columns on its row.
func (j *jscan) locShift(pos, shift int) string {
	line, rowStart := 1, 0
	for i := 0; i < pos && i < len(j.s); i++ {
		switch j.s[i] {
		case '\n':
			line++
			rowStart = i + 1
		case '\r':
			if i+1 < len(j.s) && j.s[i+1] == '\n' {
				continue
			}
			line++
			rowStart = i + 1
		}
	}
	return fmt.Sprintf(jacksonLocation, line, jsonvalue.UTF16Len(j.s[rowStart:min(pos, len(j.s))])+1+shift)
}

func (j *jscan) fail(pos int, msg string) string {
	return msg + "\n at " + j.loc(pos)
}

func (j *jscan) runeAt(pos int) (rune, int) {
	return utf8.DecodeRuneInString(j.s[pos:])
}

// JacksonChar describes a character the way Jackson does in its error
// messages: (CTRL-CHAR, code 10), 'é' (code 233), '€' (code 8364 / 0x20ac).
func JacksonChar(r rune) string {
	switch {
	case r < 0x20 || r >= 0x7f && r <= 0x9f:
		return fmt.Sprintf("(CTRL-CHAR, code %d)", r)
	case r > 255:
		return fmt.Sprintf("'%c' (code %d / 0x%x)", r, r, r)
	default:
		return fmt.Sprintf("'%c' (code %d)", r, r)
	}
}

// unexpected reports the character at pos; since Jackson 2.17 the location
// points at the character itself.
func (j *jscan) unexpected(pos int, comment string) string {
	r, _ := j.runeAt(pos)
	msg := "Unexpected character (" + JacksonChar(r) + ")"
	if comment != "" {
		msg += ": " + comment
	}
	return j.fail(pos, msg)
}

func (j *jscan) unexpectedInNumber(pos int, comment string) string {
	r, _ := j.runeAt(pos)
	return j.fail(pos, "Unexpected character ("+JacksonChar(r)+") in numeric value: "+comment)
}

func (j *jscan) eof(msg string) string {
	return j.fail(len(j.s), "Unexpected end-of-input"+msg)
}

// value scans one value starting at j.pos (not at the end of input).
func (j *jscan) value(depth int, in *container) string {
	s := j.s
	switch b := s[j.pos]; {
	case b == '{':
		return j.object(depth + 1)
	case b == '[':
		return j.array(depth + 1)
	case b == '"':
		return j.str(false)
	case b == '-' || b >= '0' && b <= '9':
		return j.number(in == nil)
	case b == 't':
		return j.literal("true")
	case b == 'f':
		return j.literal("false")
	case b == 'n':
		return j.literal("null")
	case b == '}':
		return j.unexpected(j.pos, "expected a value")
	case b == 'N' && strings.HasPrefix(s[j.pos:], "NaN"):
		return j.fail(j.pos+3, "Non-standard token 'NaN': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow")
	case b == 'I' && strings.HasPrefix(s[j.pos:], "Infinity"):
		return j.fail(j.pos+8, "Non-standard token 'Infinity': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow")
	}
	r, size := j.runeAt(j.pos)
	if isJavaIdentifierStart(r) {
		return j.invalidToken(j.pos, j.pos+size)
	}
	return j.unexpected(j.pos, "expected a valid value "+jacksonValueList)
}

// invalidToken reports the token starting at start, extended from `from`
// by the identifier characters that follow it.
func (j *jscan) invalidToken(start, from int) string {
	end := from
	n := jsonvalue.UTF16Len(j.s[start:from])
	var tok strings.Builder
	tok.WriteString(j.s[start:from])
	for end < len(j.s) {
		r, size := j.runeAt(end)
		if !isJavaIdentifierPart(r) {
			break
		}
		tok.WriteString(j.s[end : end+size])
		end += size
		n++
		if n >= jacksonMaxToken {
			tok.WriteString("...")
			break
		}
	}
	return j.fail(end, "Unrecognized token '"+tok.String()+"': was expecting "+jacksonValueList)
}

func (j *jscan) literal(word string) string {
	for k := 1; k < len(word); k++ {
		p := j.pos + k
		if p >= len(j.s) || j.s[p] != word[k] {
			return j.invalidToken(j.pos, p)
		}
	}
	end := j.pos + len(word)
	if end < len(j.s) {
		r, _ := j.runeAt(end)
		if r >= '0' && r != ']' && r != '}' && isJavaIdentifierPart(r) {
			return j.invalidToken(j.pos, end)
		}
	}
	j.pos = end
	return ""
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func (j *jscan) number(root bool) string {
	s := j.s
	i := j.pos
	if s[i] == '-' {
		i++
		if i >= len(s) {
			return j.eof(" in a Number value")
		}
		if !isDigit(s[i]) {
			return j.unexpectedInNumber(i, "expected digit (0-9) to follow minus sign, for valid numeric value")
		}
	}
	if s[i] == '0' && i+1 < len(s) && isDigit(s[i+1]) {
		return j.fail(i+1, "Invalid numeric value: Leading zeroes not allowed")
	}
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) {
			return j.eof(" in a Number value")
		}
		if !isDigit(s[i]) {
			return j.unexpectedInNumber(i, "Decimal point not followed by a digit")
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) {
			return j.eof(" in a Number value")
		}
		if !isDigit(s[i]) {
			return j.unexpectedInNumber(i, "Exponent indicator not followed by a digit")
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	j.pos = i
	if root && i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return j.unexpected(i, "Expected space separating root-level values")
		}
	}
	return ""
}

// str scans a string; name says whether it is a member name.
func (j *jscan) str(name bool) string {
	s := j.s
	j.pos++ // opening quote
	ctx := "string value"
	if name {
		ctx = "name"
	}
	for {
		if j.pos >= len(s) {
			if name {
				return j.eof(" in field name")
			}
			return j.eof(": was expecting closing quote for a string value")
		}
		c := s[j.pos]
		switch {
		case c == '"':
			j.pos++
			return ""
		case c == '\\':
			j.pos++
			if j.pos >= len(s) {
				return j.eof(" in character escape sequence")
			}
			switch e := s[j.pos]; e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j.pos++
			case 'u':
				j.pos++
				for k := 0; k < 4; k++ {
					if j.pos >= len(s) {
						return j.eof(" in character escape sequence")
					}
					if !isHex(s[j.pos]) {
						return j.unexpected(j.pos, "expected a hex-digit for character escape sequence")
					}
					j.pos++
				}
			default:
				r, size := j.runeAt(j.pos)
				return j.fail(j.pos+size, "Unrecognized character escape "+JacksonChar(r))
			}
		case c < 0x20:
			// The parser has read the character but, inside a string,
			// not counted a new line for it.
			return "Illegal unquoted character (" + JacksonChar(rune(c)) + "): has to be escaped using backslash to be included in " + ctx +
				"\n at " + j.locShift(j.pos, 1)
		default:
			j.pos++
		}
	}
}

func isHex(b byte) bool {
	return isDigit(b) || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

func (j *jscan) nestingTooDeep(depth int) string {
	return j.fail(j.pos+1, fmt.Sprintf("Document nesting depth (%d) exceeds the maximum allowed (%d, from `StreamReadConstraints.getMaxNestingDepth()`)", depth, jacksonMaxDepth))
}

// closer handles a ']' or '}' where Jackson accepts a closing marker: it
// closes c when it matches and reports a mismatch otherwise.
func (j *jscan) closer(c *container) (closed bool, msg string) {
	b := j.s[j.pos]
	if b != ']' && b != '}' {
		return false, ""
	}
	if c != nil && c.object == (b == '}') {
		j.pos++
		return true, ""
	}
	expect := byte(']')
	if b == ']' {
		expect = '}'
	}
	start := fmt.Sprintf(jacksonLocation, 1, 0)
	if c != nil {
		start = j.loc(c.open)
	}
	return false, j.fail(j.pos+1, fmt.Sprintf("Unexpected close marker '%c': expected '%c' (for %s starting at %s)", b, expect, c.desc(), start))
}

func (j *jscan) object(depth int) string {
	if depth > jacksonMaxDepth {
		return j.nestingTooDeep(depth)
	}
	c := &container{object: true, open: j.pos}
	unclosed := func() string {
		return j.eof(": expected close marker for Object (start marker at " + j.loc(c.open) + ")")
	}
	j.pos++
	j.skipSpace()
	if j.pos >= len(j.s) {
		return unclosed()
	}
	if closed, msg := j.closer(c); closed || msg != "" {
		return msg
	}
	for {
		if j.s[j.pos] != '"' {
			return j.unexpected(j.pos, "was expecting double-quote to start field name")
		}
		if msg := j.str(true); msg != "" {
			return msg
		}
		j.skipSpace()
		if j.pos >= len(j.s) {
			return j.eof(" within/between Object entries")
		}
		if j.s[j.pos] != ':' {
			return j.unexpected(j.pos, "was expecting a colon to separate field name and value")
		}
		j.pos++
		j.skipSpace()
		if j.pos >= len(j.s) {
			return j.eof(" within/between Object entries")
		}
		if msg := j.value(depth, c); msg != "" {
			return msg
		}
		j.skipSpace()
		if j.pos >= len(j.s) {
			return unclosed()
		}
		if closed, msg := j.closer(c); closed || msg != "" {
			return msg
		}
		if j.s[j.pos] != ',' {
			return j.unexpected(j.pos, "was expecting comma to separate Object entries")
		}
		j.pos++
		j.skipSpace()
		if j.pos >= len(j.s) {
			return j.eof(" within/between Object entries")
		}
	}
}

func (j *jscan) array(depth int) string {
	if depth > jacksonMaxDepth {
		return j.nestingTooDeep(depth)
	}
	c := &container{open: j.pos}
	unclosed := func() string {
		return j.eof(": expected close marker for Array (start marker at " + j.loc(c.open) + ")")
	}
	j.pos++
	j.skipSpace()
	if j.pos >= len(j.s) {
		return unclosed()
	}
	if closed, msg := j.closer(c); closed || msg != "" {
		return msg
	}
	for {
		if msg := j.value(depth, c); msg != "" {
			return msg
		}
		j.skipSpace()
		if j.pos >= len(j.s) {
			return unclosed()
		}
		if closed, msg := j.closer(c); closed || msg != "" {
			return msg
		}
		if j.s[j.pos] != ',' {
			return j.unexpected(j.pos, "was expecting comma to separate Array entries")
		}
		j.pos++
		j.skipSpace()
		if j.pos >= len(j.s) {
			return j.eof(" within/between Array entries")
		}
	}
}

// isJavaIdentifierStart approximates Character.isJavaIdentifierStart.
func isJavaIdentifierStart(r rune) bool {
	return unicode.IsLetter(r) || r == '_' || r == '$' ||
		unicode.In(r, unicode.Sc, unicode.Pc, unicode.Nl)
}

// isJavaIdentifierPart approximates Character.isJavaIdentifierPart.
func isJavaIdentifierPart(r rune) bool {
	return isJavaIdentifierStart(r) || unicode.IsDigit(r) ||
		unicode.In(r, unicode.Mn, unicode.Mc, unicode.Cf) ||
		r <= 0x08 || r >= 0x0e && r <= 0x1b || r >= 0x7f && r <= 0x9f
}
