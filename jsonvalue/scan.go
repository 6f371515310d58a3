package jsonvalue

import (
	"errors"
	"fmt"
	"io"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The scanner is the one reader of JSON syntax: Parse builds values from
// its tokens, the definition parser words its errors as Step Functions
// does (Jackson's words), and the API layer checks request bodies with it.
// An error says what was wrong (ErrorCode) and where (a byte offset, and
// the container the error is in), so each caller can word it its own way.

// TokenKind is the kind of a Token.
type TokenKind uint8

// The token kinds. A member's name is a NameToken; the value that
// follows it is the next token.
const (
	BeginObject TokenKind = iota + 1
	EndObject
	BeginArray
	EndArray
	NameToken
	StringToken
	NumberToken
	TrueToken
	FalseToken
	NullToken
)

// Token is one token of JSON text: its kind and the bytes it spans
// (a string's or a name's quotes included).
type Token struct {
	Kind       TokenKind
	Start, End int
	escaped    bool // a string that holds escapes
	// Unpaired reports that a string escapes a UTF-16 surrogate with no
	// partner ("\ud800"), which no Go string holds as a character.
	Unpaired bool
}

// ErrorCode says what is wrong with malformed JSON text.
type ErrorCode uint8

// The error codes. A SyntaxError's Offset is the byte the error is found
// at: the unexpected character, the start of an invalid token, the
// opening bracket too deep, or the end of the text.
const (
	ErrEnd          ErrorCode = iota + 1 // the text ends inside a value, or is empty
	ErrEndInString                       // the text ends inside a string
	ErrEndInNumber                       // the text ends inside a number
	ErrUnexpected                        // a character that cannot be there (see Expect)
	ErrInvalidToken                      // a word that is not true, false or null
	ErrLeadingZero                       // a number with a leading zero
	ErrBadEscape                         // a backslash before a character that cannot be escaped
	ErrControl                           // an unescaped control character in a string
	ErrInvalidUTF8                       // bytes of a string that are not UTF-8
	ErrMismatched                        // a closing bracket of the other kind
	ErrTrailing                          // something after the top-level value
	ErrDepth                             // containers nested deeper than the limit
)

// Expect says what an ErrUnexpected error expected instead.
type Expect uint8

// What a scanner expects where it found an unexpected character.
const (
	ExpectValue       Expect = iota + 1 // the start of a value
	ExpectName                          // the quote that starts a member's name
	ExpectColon                         // the colon after a member's name
	ExpectObjectComma                   // a comma or the end of an object
	ExpectArrayComma                    // a comma or the end of an array
	ExpectHex                           // a hex digit of a \u escape
	ExpectMinusDigit                    // a digit after a minus sign
	ExpectFraction                      // a digit after a decimal point
	ExpectExponent                      // a digit of an exponent
)

// SyntaxError describes malformed JSON text.
type SyntaxError struct {
	Msg    string
	Offset int // byte offset of the error
	Code   ErrorCode
	Expect Expect // for ErrUnexpected
	// In is the container the error is in ('{', '[' or 0 at the top
	// level), opened at byte offset Open.
	In   byte
	Open int
	// Depth is the nesting an ErrDepth error reached.
	Depth int
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at offset %d", e.Msg, e.Offset)
}

// Is makes an ErrDepth error match ErrTooDeep.
func (e *SyntaxError) Is(target error) bool {
	return target == ErrTooDeep && e.Code == ErrDepth
}

// ErrTooDeep matches the error Parse returns for text nested deeper than
// the limit.
var ErrTooDeep = errors.New("JSON nested too deeply")

// scan states: what the scanner reads next.
const (
	stValue      = iota // a value
	stFirstValue        // a value or ']' (after '[')
	stFirstName         // a name or '}' (after '{')
	stName              // a name (after ',' in an object)
	stAfterValue        // ',' or the end of the container
	stDone              // the end of the text
)

// Scanner reads JSON text a token at a time, checking its syntax.
type Scanner struct {
	data     []byte
	pos      int
	state    int
	open     []int // offsets of the open containers' brackets
	maxDepth int
	tok      Token // the last token read
	err      error
}

// NewScanner returns a scanner over data that allows DefaultMaxDepth
// levels of nesting.
func NewScanner(data []byte) *Scanner {
	return &Scanner{data: data, maxDepth: DefaultMaxDepth}
}

// SetMaxDepth sets how deep containers may nest.
func (s *Scanner) SetMaxDepth(n int) { s.maxDepth = n }

// Depth is the number of containers open after the last token.
func (s *Scanner) Depth() int { return len(s.open) }

// Next returns the next token. After the top-level value it checks that
// nothing but space follows and returns io.EOF. A syntax error is a
// *SyntaxError, returned again by every later call.
func (s *Scanner) Next() (Token, error) {
	if s.err != nil {
		return Token{}, s.err
	}
	err := s.next()
	return s.tok, err
}

// next reads the next token into s.tok.
func (s *Scanner) next() error {
	s.skipSpace()
	switch s.state {
	case stFirstValue:
		if s.pos < len(s.data) && s.data[s.pos] == ']' {
			s.close(EndArray)
			return nil
		}
		return s.value()
	case stValue:
		return s.value()
	case stFirstName:
		if s.pos < len(s.data) && s.data[s.pos] == '}' {
			s.close(EndObject)
			return nil
		}
		return s.name()
	case stName:
		return s.name()
	case stAfterValue:
		if s.pos >= len(s.data) {
			return s.fail(ErrEnd, 0)
		}
		inObject := s.data[s.open[len(s.open)-1]] == '{'
		switch c := s.data[s.pos]; {
		case c == ',':
			s.pos++
			s.skipSpace()
			if inObject {
				return s.name()
			}
			return s.value()
		case c == '}' && inObject:
			s.close(EndObject)
			return nil
		case c == ']' && !inObject:
			s.close(EndArray)
			return nil
		case c == '}' || c == ']':
			return s.fail(ErrMismatched, 0)
		case inObject:
			return s.fail(ErrUnexpected, ExpectObjectComma)
		default:
			return s.fail(ErrUnexpected, ExpectArrayComma)
		}
	default:
		if s.pos != len(s.data) {
			return s.fail(ErrTrailing, 0)
		}
		s.tok = Token{}
		return io.EOF
	}
}

func (s *Scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// close reads the closing bracket at s.pos.
func (s *Scanner) close(kind TokenKind) {
	s.tok = Token{Kind: kind, Start: s.pos, End: s.pos + 1}
	s.pos++
	s.open = s.open[:len(s.open)-1]
	s.afterValue()
}

func (s *Scanner) afterValue() {
	if len(s.open) == 0 {
		s.state = stDone
	} else {
		s.state = stAfterValue
	}
}

func (s *Scanner) name() error {
	if s.pos >= len(s.data) {
		return s.fail(ErrEnd, 0)
	}
	if s.data[s.pos] != '"' {
		return s.fail(ErrUnexpected, ExpectName)
	}
	if err := s.str(); err != nil {
		return err
	}
	s.tok.Kind = NameToken
	s.skipSpace()
	if s.pos >= len(s.data) {
		return s.fail(ErrEnd, 0)
	}
	if s.data[s.pos] != ':' {
		return s.fail(ErrUnexpected, ExpectColon)
	}
	s.pos++
	s.state = stValue
	return nil
}

func (s *Scanner) value() error {
	if s.pos >= len(s.data) {
		return s.fail(ErrEnd, 0)
	}
	start := s.pos
	switch c := s.data[s.pos]; {
	case c == '{' || c == '[':
		if len(s.open) >= s.maxDepth {
			return s.fail(ErrDepth, 0)
		}
		s.open = append(s.open, s.pos)
		s.pos++
		if c == '{' {
			s.state = stFirstName
			s.tok = Token{Kind: BeginObject, Start: start, End: s.pos}
			return nil
		}
		s.state = stFirstValue
		s.tok = Token{Kind: BeginArray, Start: start, End: s.pos}
		return nil
	case c == '"':
		if err := s.str(); err != nil {
			return err
		}
		s.afterValue()
		return nil
	case c == '-' || (c >= '0' && c <= '9'):
		if err := s.number(); err != nil {
			return err
		}
		s.afterValue()
		s.tok = Token{Kind: NumberToken, Start: start, End: s.pos}
		return nil
	case c == 't':
		return s.literal("true", TrueToken)
	case c == 'f':
		return s.literal("false", FalseToken)
	case c == 'n':
		return s.literal("null", NullToken)
	default:
		if r, _ := utf8.DecodeRune(s.data[s.pos:]); IsWordRune(r) {
			return s.fail(ErrInvalidToken, 0)
		}
		return s.fail(ErrUnexpected, ExpectValue)
	}
}

// IsWordRune reports whether r continues a word: a letter, a digit, '_'
// or '$'. A literal followed by one (nulls) is an invalid token.
func IsWordRune(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func (s *Scanner) literal(word string, kind TokenKind) error {
	start := s.pos
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		return s.fail(ErrInvalidToken, 0)
	}
	if r, _ := utf8.DecodeRune(s.data[s.pos+len(word):]); s.pos+len(word) < len(s.data) && IsWordRune(r) {
		return s.fail(ErrInvalidToken, 0)
	}
	s.pos += len(word)
	s.afterValue()
	s.tok = Token{Kind: kind, Start: start, End: s.pos}
	return nil
}

func (s *Scanner) number() error {
	d := s.data
	if d[s.pos] == '-' {
		s.pos++
		if s.pos >= len(d) {
			return s.fail(ErrEndInNumber, 0)
		}
		if d[s.pos] < '0' || d[s.pos] > '9' {
			return s.fail(ErrUnexpected, ExpectMinusDigit)
		}
	}
	if d[s.pos] == '0' && s.pos+1 < len(d) && d[s.pos+1] >= '0' && d[s.pos+1] <= '9' {
		return s.fail(ErrLeadingZero, 0)
	}
	s.digits()
	if s.pos < len(d) && d[s.pos] == '.' {
		s.pos++
		if s.digits() == 0 {
			return s.numberChar(ExpectFraction)
		}
	}
	if s.pos < len(d) && (d[s.pos] == 'e' || d[s.pos] == 'E') {
		s.pos++
		if s.pos < len(d) && (d[s.pos] == '+' || d[s.pos] == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			return s.numberChar(ExpectExponent)
		}
	}
	return nil
}

func (s *Scanner) digits() int {
	n := 0
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
		n++
	}
	return n
}

func (s *Scanner) numberChar(e Expect) error {
	if s.pos >= len(s.data) {
		return s.fail(ErrEndInNumber, 0)
	}
	return s.fail(ErrUnexpected, e)
}

// str scans the string at s.pos.
func (s *Scanner) str() error {
	t := &s.tok
	*t = Token{Kind: StringToken, Start: s.pos}
	s.pos++ // opening quote
	d := s.data
	for s.pos < len(d) {
		c := d[s.pos]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			s.pos++
			continue
		}
		switch {
		case c == '"':
			s.pos++
			t.End = s.pos
			return nil
		case c == '\\':
			t.escaped = true
			s.pos++
			if s.pos >= len(d) {
				return s.fail(ErrEndInString, 0)
			}
			switch d[s.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos++
			case 'u':
				s.pos++
				r, err := s.hex4()
				if err != nil {
					return err
				}
				if utf16.IsSurrogate(r) && !s.pairs(r) {
					t.Unpaired = true
				}
			default:
				return s.fail(ErrBadEscape, 0)
			}
		case c < 0x20:
			return s.fail(ErrControl, 0)
		case c < utf8.RuneSelf:
			s.pos++
		default:
			r, size := utf8.DecodeRune(d[s.pos:])
			if r == utf8.RuneError && size <= 1 {
				return s.fail(ErrInvalidUTF8, 0)
			}
			s.pos += size
		}
	}
	return s.fail(ErrEndInString, 0)
}

// hex4 reads the four hex digits of a \u escape.
func (s *Scanner) hex4() (rune, error) {
	var r rune
	for i := 0; i < 4; i++ {
		if s.pos >= len(s.data) {
			return 0, s.fail(ErrEndInString, 0)
		}
		n, ok := hexValue(s.data[s.pos])
		if !ok {
			return 0, s.fail(ErrUnexpected, ExpectHex)
		}
		r = r<<4 | n
		s.pos++
	}
	return r, nil
}

// pairs reports whether the surrogate r is followed by its partner's
// escape (which it then reads).
func (s *Scanner) pairs(r rune) bool {
	r2, ok := escapedRune(s.data[s.pos:])
	if !ok || utf16.DecodeRune(r, r2) == utf8.RuneError {
		return false
	}
	s.pos += 6
	return true
}

func hexValue(c byte) (rune, bool) {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0'), true
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10), true
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10), true
	}
	return 0, false
}

// escapedRune reads the \uXXXX escape b starts with.
func escapedRune(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range b[2:6] {
		n, ok := hexValue(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | n
	}
	return r, true
}

// fail records the error found at s.pos.
func (s *Scanner) fail(code ErrorCode, expect Expect) error {
	e := &SyntaxError{Offset: s.pos, Code: code, Expect: expect, Open: -1}
	if n := len(s.open); n > 0 {
		e.Open = s.open[n-1]
		e.In = s.data[e.Open]
	}
	if code == ErrDepth {
		e.Depth = len(s.open) + 1
	}
	e.Msg = e.describe(s.data)
	s.err = e
	return e
}

// describe words the error in the package's own words.
func (e *SyntaxError) describe(data []byte) string {
	switch e.Code {
	case ErrEnd:
		return "unexpected end of JSON input"
	case ErrEndInString:
		return "unexpected end of JSON input in string"
	case ErrEndInNumber:
		return "invalid number: unexpected end of JSON input"
	case ErrInvalidToken:
		switch data[e.Offset] {
		case 't':
			return `invalid literal, expected "true"`
		case 'f':
			return `invalid literal, expected "false"`
		case 'n':
			return `invalid literal, expected "null"`
		}
		r, _ := utf8.DecodeRune(data[e.Offset:])
		return fmt.Sprintf("invalid character %q looking for beginning of value", r)
	case ErrLeadingZero:
		return "invalid number: leading zero"
	case ErrBadEscape:
		r, _ := utf8.DecodeRune(data[e.Offset:])
		return fmt.Sprintf("invalid escape character %q in string", r)
	case ErrControl:
		return "invalid control character in string"
	case ErrInvalidUTF8:
		return "invalid UTF-8 in string"
	case ErrMismatched, ErrUnexpected:
		return e.describeUnexpected(data)
	case ErrTrailing:
		return "unexpected data after top-level value"
	default: // ErrDepth
		return fmt.Sprintf("%v (more than %d levels)", ErrTooDeep, e.Depth-1)
	}
}

func (e *SyntaxError) describeUnexpected(data []byte) string {
	if e.Code == ErrMismatched {
		if e.In == '{' {
			return "expected ',' or '}' after object member"
		}
		return "expected ',' or ']' after array element"
	}
	switch e.Expect {
	case ExpectName:
		return "expected string for object member name"
	case ExpectColon:
		return "expected ':' after object member name"
	case ExpectObjectComma:
		return "expected ',' or '}' after object member"
	case ExpectArrayComma:
		return "expected ',' or ']' after array element"
	case ExpectHex:
		return `invalid \u escape`
	case ExpectMinusDigit:
		return "invalid number"
	case ExpectFraction:
		return "invalid number: no digits after decimal point"
	case ExpectExponent:
		return "invalid number: no digits in exponent"
	default:
		r, _ := utf8.DecodeRune(data[e.Offset:])
		return fmt.Sprintf("invalid character %q looking for beginning of value", r)
	}
}

// Text is the value of a StringToken or NameToken: escapes decoded, an
// unpaired surrogate as U+FFFD.
func (s *Scanner) Text(t Token) string {
	if !t.escaped {
		return string(s.data[t.Start+1 : t.End-1])
	}
	return string(appendUnquoted(nil, s.data[t.Start+1:t.End-1], false))
}

// TextWTF8 is Text, but an unpaired surrogate is kept in WTF-8 form (the
// three bytes UTF-8 would give the code unit: not valid UTF-8), so a name
// sent with one can be told from a name sent with U+FFFD.
func (s *Scanner) TextWTF8(t Token) string {
	return string(appendUnquoted(nil, s.data[t.Start+1:t.End-1], true))
}

// appendUnquoted decodes the inside of a valid JSON string.
func appendUnquoted(b, raw []byte, wtf8 bool) []byte {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, _ := escapedRune(raw[i-1:])
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := escapedRune(raw[i+1:]); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						b = utf8.AppendRune(b, dec)
						i += 6
						continue
					}
				}
				if wtf8 {
					b = append(b, 0xe0|byte(r>>12), 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f)
					continue
				}
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
		default: // " \ /
			b = append(b, raw[i])
		}
	}
	return b
}

// Skip skips the rest of the value whose first token was t.
func (s *Scanner) Skip(t Token) error {
	if t.Kind != BeginObject && t.Kind != BeginArray {
		return nil
	}
	depth := len(s.open)
	for len(s.open) >= depth {
		if _, err := s.Next(); err != nil {
			return err
		}
	}
	return nil
}
