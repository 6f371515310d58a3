package expr

import (
	"errors"
	"strings"
	"time"
	_ "time/tzdata" // zone names must resolve without a host zoneinfo database
)

// Expr is a parsed schedule expression.
type Expr interface {
	// Next returns the first slot strictly after after, and false when there
	// is none (an at() already past, a cron whose years are over).
	Next(after time.Time) (time.Time, bool)
}

// Kind names the three expression types.
type Kind string

const (
	KindAt   Kind = "at"
	KindRate Kind = "rate"
	KindCron Kind = "cron"
)

// ErrInvalidExpression matches (errors.Is) every *Error.
var ErrInvalidExpression = errors.New("invalid schedule expression")

// ErrInvalidTimezone matches (errors.Is) every *TimezoneError.
var ErrInvalidTimezone = errors.New("invalid schedule expression timezone")

// Error reports an invalid schedule expression. Error() is the message
// CreateSchedule gives in its ValidationException.
type Error struct {
	Expression string // the expression as given
	Field      string // e.g. "Day-of-week", "rate unit", "at"; "" when the form itself is wrong
	Value      string // the offending text
	Reason     string // what is wrong with it
}

func (e *Error) Error() string { return "Invalid Schedule Expression " + e.Expression + "." }

// Detail describes which part is wrong and why.
func (e *Error) Detail() string {
	var b strings.Builder
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(" ")
	}
	if e.Value != "" {
		b.WriteString("\"")
		b.WriteString(e.Value)
		b.WriteString("\": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Is makes errors.Is(err, ErrInvalidExpression) true.
func (e *Error) Is(target error) bool { return target == ErrInvalidExpression }

// TimezoneError reports a ScheduleExpressionTimezone that is not a known IANA
// zone name.
type TimezoneError struct {
	Timezone string
}

func (e *TimezoneError) Error() string {
	return "Invalid ScheduleExpressionTimezone " + e.Timezone + "."
}

// Is makes errors.Is(err, ErrInvalidTimezone) true.
func (e *TimezoneError) Is(target error) bool { return target == ErrInvalidTimezone }

// LoadTimezone resolves a ScheduleExpressionTimezone: "" is UTC; otherwise an
// IANA name. "Local" is refused.
func LoadTimezone(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	if tz == "Local" || strings.TrimSpace(tz) != tz {
		return nil, &TimezoneError{Timezone: tz}
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, &TimezoneError{Timezone: tz}
	}
	return loc, nil
}

// Parse parses expr evaluated in time zone tz ("" = UTC). A rate() is
// anchored at time.Now(), as a schedule created now without a StartDate;
// use ParseAt to give the anchor.
func Parse(expr, tz string) (Expr, error) {
	return ParseAt(expr, tz, time.Now())
}

// ParseAt is Parse with the anchor of a rate() given: the schedule's
// StartDate if it has one, else its creation time. The anchor is truncated to
// the minute and is itself the first slot. at() and cron() ignore it.
func ParseAt(expr, tz string, anchor time.Time) (Expr, error) {
	loc, err := LoadTimezone(tz)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.HasPrefix(expr, "at(") && strings.HasSuffix(expr, ")"):
		return parseAt(expr, expr[3:len(expr)-1], loc)
	case strings.HasPrefix(expr, "rate(") && strings.HasSuffix(expr, ")"):
		return parseRate(expr, expr[5:len(expr)-1], loc, anchor)
	case strings.HasPrefix(expr, "cron(") && strings.HasSuffix(expr, ")"):
		return parseCron(expr, expr[5:len(expr)-1], loc)
	}
	return nil, &Error{Expression: expr, Reason: "expected at(...), rate(...) or cron(...)"}
}

// ForSchedule builds the Expr of a schedule as CreateSchedule describes it:
// a rate() is anchored at start if given, else at created; start and end
// bound the slots (ignored for at(), as AWS does).
func ForSchedule(expr, tz string, start, end *time.Time, created time.Time) (Expr, error) {
	anchor := created
	if start != nil {
		anchor = *start
	}
	e, err := ParseAt(expr, tz, anchor)
	if err != nil {
		return nil, err
	}
	return Bounded(e, start, end), nil
}

// Slots returns the slots s of e with from < s <= to, at most max of them
// (none when max <= 0), in increasing order.
func Slots(e Expr, from, to time.Time, max int) []time.Time {
	var out []time.Time
	after := from
	for len(out) < max {
		t, ok := e.Next(after)
		if !ok || t.After(to) || !t.After(after) {
			break
		}
		out = append(out, t)
		after = t
	}
	return out
}

// Bounded limits e to slots s with start <= s < end; a nil bound is open.
// As EventBridge Scheduler ignores StartDate and EndDate for one-time
// schedules, an *At is returned unchanged.
func Bounded(e Expr, start, end *time.Time) Expr {
	if _, ok := e.(*At); ok {
		return e
	}
	if start == nil && end == nil {
		return e
	}
	b := &bounded{e: e}
	if start != nil {
		b.hasStart, b.start = true, *start
	}
	if end != nil {
		b.hasEnd, b.end = true, *end
	}
	return b
}

type bounded struct {
	e                Expr
	hasStart, hasEnd bool
	start, end       time.Time
}

func (b *bounded) Next(after time.Time) (time.Time, bool) {
	if b.hasStart && after.Before(b.start) {
		after = b.start.Add(-time.Nanosecond)
	}
	if b.hasEnd && !after.Before(b.end) {
		return time.Time{}, false
	}
	t, ok := b.e.Next(after)
	if !ok || (b.hasEnd && !t.Before(b.end)) {
		return time.Time{}, false
	}
	return t, true
}

// Unwrap returns the bounded expression.
func (b *bounded) Unwrap() Expr { return b.e }
