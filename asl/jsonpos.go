package asl

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"stepwise/jsonvalue"
)

// SyntaxError is where a definition's JSON text goes wrong, for pointing
// at it: Line and Column count from 1 (Column in characters), LineText is
// the text of that line and Message the parser's words without the
// location AWS appends to them.
type SyntaxError struct {
	Line, Column int
	LineText     string
	Message      string
}

// JSONSyntaxError returns where the JSON text of definition is malformed,
// or false when it is well-formed JSON.
func JSONSyntaxError(definition []byte) (SyntaxError, bool) {
	_, err := jsonvalue.Parse(definition)
	if err == nil {
		return SyntaxError{}, false
	}
	var se *jsonvalue.SyntaxError
	if !errors.As(err, &se) {
		return SyntaxError{Line: 1, Column: 1, Message: err.Error()}, true
	}
	msg, _ := jacksonMessage(definition, se)
	if se.In != 0 && (strings.Contains(msg, "start marker at ") || strings.Contains(msg, "starting at ")) {
		l, c, _ := lineCol(definition, se.Open)
		msg = strings.Replace(msg, location(definition, se.Open), "line "+strconv.Itoa(l)+", column "+strconv.Itoa(c), 1)
	}
	off := se.Offset
	if off > len(definition) {
		off = len(definition)
	}
	if off == len(definition) {
		// At the end of the text: point just past its last character.
		for off > 0 && strings.ContainsRune(" \t\r\n", rune(definition[off-1])) {
			off--
		}
	}
	line, col, text := lineCol(definition, off)
	return SyntaxError{Line: line, Column: col, LineText: text, Message: msg}, true
}

// lineCol returns the line and column (from 1, in characters) of byte
// offset off, and the text of its line.
func lineCol(data []byte, off int) (int, int, string) {
	line, start := 1, 0
	for i := 0; i < off && i < len(data); i++ {
		if data[i] == '\n' {
			line++
			start = i + 1
		}
	}
	end := start
	for end < len(data) && data[end] != '\n' {
		end++
	}
	text := strings.TrimSuffix(string(data[start:end]), "\r")
	return line, utf8.RuneCount(data[start:min(off, len(data))]) + 1, text
}
