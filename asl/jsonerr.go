package asl

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"stepwise/asl/intrinsic"
	"stepwise/jsonvalue"
)

// Step Functions reads definitions with Jackson and reports malformed JSON
// in Jackson's words, with the location written as Jackson writes it:
//
//	Unrecognized token 'not': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')
//	 at [Source: (String)"not a definition"; line: 1, column: 4]
//
// jsonSyntaxDiagnostic words the error jsonvalue's scanner found the way
// Jackson's reader does. It covers the errors a hand-written definition
// runs into; anything else keeps the message of jsonvalue.Parse.

// jacksonMaxSnippet is how much of the text Jackson quotes in a location.
const jacksonMaxSnippet = 500

// jacksonMaxToken is the longest token Jackson quotes in an error.
const jacksonMaxToken = 256

const jacksonValueList = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"

// jsonSyntaxDiagnostic returns the INVALID_JSON_DESCRIPTION diagnostic for
// data, which jsonvalue.Parse rejected with parseErr.
func jsonSyntaxDiagnostic(data []byte, parseErr error) Diagnostic {
	var se *jsonvalue.SyntaxError
	if !errors.As(parseErr, &se) {
		return errInvalidJSON(parseErr.Error(), "")
	}
	msg, at := jacksonMessage(data, se)
	loc := location(data, at)
	return errInvalidJSON(msg+"\n at "+loc, loc)
}

// jacksonMessage words a syntax error as Jackson does, with the offset its
// location points at: just past the character it stopped at.
func jacksonMessage(data []byte, se *jsonvalue.SyntaxError) (string, int) {
	r, n := utf8.DecodeRune(data[se.Offset:])
	at := se.Offset + n
	switch se.Code {
	case jsonvalue.ErrEnd:
		switch se.In {
		case '{':
			return "Unexpected end-of-input: expected close marker for Object (start marker at " + location(data, se.Open) + ")", at
		case '[':
			return "Unexpected end-of-input: expected close marker for Array (start marker at " + location(data, se.Open) + ")", at
		}
		return "No content to map due to end-of-input", at
	case jsonvalue.ErrEndInString:
		return "Unexpected end-of-input: was expecting closing quote for a string value", at
	case jsonvalue.ErrEndInNumber:
		return "Unexpected end-of-input in a Number value", at
	case jsonvalue.ErrInvalidToken:
		token, end := invalidToken(data, se.Offset)
		return "Unrecognized token '" + token + "': was expecting " + jacksonValueList, end
	case jsonvalue.ErrLeadingZero:
		return "Invalid numeric value: Leading zeroes not allowed", at
	case jsonvalue.ErrBadEscape:
		return "Unrecognized character escape " + intrinsic.JacksonChar(r), at
	case jsonvalue.ErrControl:
		return "Illegal unquoted character (" + intrinsic.JacksonChar(r) + "): has to be escaped using backslash to be included in string value", at
	case jsonvalue.ErrMismatched:
		if se.In == '{' {
			return "Unexpected close marker ']': expected '}' (for Object starting at " + location(data, se.Open) + ")", at
		}
		return "Unexpected close marker '}': expected ']' (for Array starting at " + location(data, se.Open) + ")", at
	case jsonvalue.ErrDepth:
		return fmt.Sprintf("Document nesting depth (%d) exceeds the maximum allowed (%d, from `StreamReadConstraints.getMaxNestingDepth()`)", se.Depth, se.Depth-1), at
	case jsonvalue.ErrUnexpected:
		if what, ok := jacksonExpected[se.Expect]; ok {
			return "Unexpected character (" + intrinsic.JacksonChar(r) + ")" + what, at
		}
	}
	// Not a Jackson error (invalid UTF-8, trailing data): say what the
	// parser said.
	return se.Msg, se.Offset
}

// jacksonExpected is what Jackson says it expected, after the character.
var jacksonExpected = map[jsonvalue.Expect]string{
	jsonvalue.ExpectValue:       ": expected a valid value " + jacksonValueList,
	jsonvalue.ExpectName:        ": was expecting double-quote to start field name",
	jsonvalue.ExpectColon:       ": was expecting a colon to separate field name and value",
	jsonvalue.ExpectObjectComma: ": was expecting comma to separate Object entries",
	jsonvalue.ExpectArrayComma:  ": was expecting comma to separate Array entries",
	jsonvalue.ExpectHex:         ": expected a hex-digit for character escape sequence",
	jsonvalue.ExpectMinusDigit:  " in numeric value: expected digit (0-9) to follow minus sign, for valid numeric value",
	jsonvalue.ExpectFraction:    " in numeric value: Decimal point not followed by a digit",
	jsonvalue.ExpectExponent:    " in numeric value: Exponent indicator not followed by a digit",
}

// location renders a Jackson location for byte offset off.
func location(data []byte, off int) string {
	if off > len(data) {
		off = len(data)
	}
	line, col := 1, 1
	for i := 0; i < off; {
		r, n := utf8.DecodeRune(data[i:])
		switch r {
		case '\n':
			line++
			col = 1
		case '\r':
			if i+1 < len(data) && data[i+1] == '\n' && i+1 < off {
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
	return fmt.Sprintf("[Source: %s; line: %d, column: %d]", source(data), line, col)
}

func source(data []byte) string {
	text := string(data)
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

// invalidToken is the token Jackson quotes for an invalid token starting
// at start (its first character and the word characters that follow),
// and the offset just past it.
func invalidToken(data []byte, start int) (string, int) {
	i := start
	var b strings.Builder
	for i < len(data) {
		r, n := utf8.DecodeRune(data[i:])
		if i > start && !jsonvalue.IsWordRune(r) {
			break
		}
		b.WriteRune(r)
		i += n
		if b.Len() >= jacksonMaxToken {
			b.WriteString("...")
			break
		}
	}
	return b.String(), i
}
