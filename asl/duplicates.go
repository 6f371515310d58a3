package asl

import (
	"stepwise/jsonvalue"
)

// The JSON parser keeps one member when a name is given twice, so a state
// written twice in one States object would silently disappear. This scan
// over the (already valid) text finds those names.

// jsonRole says what a JSON value is in a definition.
type jsonRole int

const (
	roleOther    jsonRole = iota
	roleMachine           // the root, a branch, an item processor
	roleStates            // a machine's States
	roleState             // one state
	roleBranches          // a Parallel state's Branches
)

type dupScanner struct {
	data []byte
	pos  int
	out  map[string]int
}

// duplicateStates counts, by location, the extra times a state name is
// given in a States object. data must be valid JSON.
func duplicateStates(data []byte) map[string]int {
	s := &dupScanner{data: data}
	s.value(roleMachine, "")
	return s.out
}

func (s *dupScanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *dupScanner) value(role jsonRole, loc string) {
	s.space()
	if s.pos >= len(s.data) {
		return
	}
	switch s.data[s.pos] {
	case '{':
		s.object(role, loc)
	case '[':
		s.array(role, loc)
	case '"':
		s.skipString()
	default:
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			s.pos++
		}
	}
}

// skipString skips a string and returns its raw text, quotes included.
func (s *dupScanner) skipString() []byte {
	start := s.pos
	s.pos++
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '\\':
			s.pos += 2
			continue
		case '"':
			s.pos++
			return s.data[start:s.pos]
		}
		s.pos++
	}
	return s.data[start:]
}

func (s *dupScanner) object(role jsonRole, loc string) {
	s.pos++ // {
	var seen map[string]bool
	if role == roleStates {
		seen = make(map[string]bool)
	}
	for {
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] == '}' {
			s.pos++
			return
		}
		if s.data[s.pos] == ',' {
			s.pos++
			continue
		}
		raw := s.skipString()
		v, _ := jsonvalue.Parse(raw)
		key, _ := v.(string)
		s.space()
		s.pos++ // :
		child, cloc := roleOther, loc+"/"+key
		switch role {
		case roleMachine:
			if key == "States" {
				child = roleStates
			}
		case roleStates:
			child = roleState
			if seen[key] {
				if s.out == nil {
					s.out = make(map[string]int)
				}
				s.out[cloc]++
			}
			seen[key] = true
		case roleState:
			switch key {
			case "Branches":
				child = roleBranches
			case "ItemProcessor", "Iterator":
				child = roleMachine
			}
		}
		s.value(child, cloc)
	}
}

func (s *dupScanner) array(role jsonRole, loc string) {
	s.pos++ // [
	for i := 0; ; {
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] == ']' {
			s.pos++
			return
		}
		if s.data[s.pos] == ',' {
			s.pos++
			continue
		}
		child := roleOther
		if role == roleBranches {
			child = roleMachine
		}
		s.value(child, index(loc, i))
		i++
	}
}
