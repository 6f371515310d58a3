// Package validation words a request's constraint violations as AWS's
// services word them, for every API the server speaks (Step Functions,
// EventBridge Scheduler):
//
//	1 validation error detected: Value '1001' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 1000
//	2 validation errors detected: Value null at 'name' failed to satisfy constraint: Member must not be null; Value ...
//
// Each API keeps its own constraints (their wording differs between
// services) and turns Message into its own ValidationException.
package validation

import (
	"strconv"
	"strings"
)

// Errors collects the violations of one request, in the order found.
type Errors []string

// Add records that value (as it is shown: "null", Quote(s), "'***'" for a
// member AWS does not echo) at member fails constraint (the whole
// constraint: "Member must not be null").
func (e *Errors) Add(value, member, constraint string) {
	*e = append(*e, "Value "+value+" at '"+member+"' failed to satisfy constraint: "+constraint)
}

// Quote shows a string value as AWS shows it: in single quotes.
func Quote(s string) string { return "'" + s + "'" }

// Message returns the text of the ValidationException for what was
// found, or "" when nothing was.
func (e Errors) Message() string {
	switch len(e) {
	case 0:
		return ""
	case 1:
		return "1 validation error detected: " + e[0]
	}
	return strconv.Itoa(len(e)) + " validation errors detected: " + strings.Join(e, "; ")
}
