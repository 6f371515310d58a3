package expr

import (
	"math"
	"strings"
	"time"
)

// At is a one-time at(yyyy-mm-ddThh:mm:ss) schedule.
type At struct {
	expr     string
	loc      *time.Location
	wall     civil
	when     time.Time
	inGap    bool
	repeated bool
}

func parseAt(full, body string, loc *time.Location) (*At, error) {
	bad := func(reason string) error {
		return &Error{Expression: full, Field: "at", Value: body, Reason: reason}
	}
	// yyyy-mm-ddThh:mm:ss, exactly.
	if len(body) != 19 || body[4] != '-' || body[7] != '-' || body[10] != 'T' ||
		body[13] != ':' || body[16] != ':' {
		return nil, bad("want yyyy-mm-ddThh:mm:ss")
	}
	num := func(s string) (int, bool) {
		n := 0
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, true
	}
	var c civil
	var ok [6]bool
	c.year, ok[0] = num(body[0:4])
	c.month, ok[1] = num(body[5:7])
	c.day, ok[2] = num(body[8:10])
	c.hour, ok[3] = num(body[11:13])
	c.minute, ok[4] = num(body[14:16])
	c.second, ok[5] = num(body[17:19])
	for _, o := range ok {
		if !o {
			return nil, bad("want yyyy-mm-ddThh:mm:ss")
		}
	}
	switch {
	case c.month < 1 || c.month > 12:
		return nil, bad("month out of range")
	case c.day < 1 || c.day > daysIn(c.year, c.month):
		return nil, bad("no such day in that month")
	case c.hour > 23:
		return nil, bad("hour out of range")
	case c.minute > 59:
		return nil, bad("minute out of range")
	case c.second > 59:
		return nil, bad("second out of range")
	}
	when, exists := resolve(loc, c)
	a := &At{expr: full, loc: loc, wall: c, when: when, inGap: !exists}
	if exists {
		// Repeated wall time: does a later instant show the same wall clock?
		for _, o := range candidateOffsets(loc, c.wallSeconds()) {
			u := c.wallSeconds() - o
			if u > when.Unix() && offsetAt(loc, u) == o {
				a.repeated = true
			}
		}
	}
	return a, nil
}

// Next returns the at() time if it is after after.
func (a *At) Next(after time.Time) (time.Time, bool) {
	if a.when.After(after) {
		return a.when, true
	}
	return time.Time{}, false
}

// Time is the instant the schedule fires.
func (a *At) Time() time.Time { return a.when }

// InGap reports that the wall-clock time does not exist in the zone (it fell
// in a spring-forward gap and was shifted later by the gap's length).
func (a *At) InGap() bool { return a.inGap }

// Repeated reports that the wall-clock time occurs twice in the zone (a
// fall-back overlap); Time is the first occurrence.
func (a *At) Repeated() bool { return a.repeated }

func (a *At) Kind() Kind               { return KindAt }
func (a *At) String() string           { return a.expr }
func (a *At) Location() *time.Location { return a.loc }
func (a *At) Wall() (y, mo, d, h, mi, s int) {
	c := a.wall
	return c.year, c.month, c.day, c.hour, c.minute, c.second
}

// Rate is a rate(value unit) schedule: anchor + k*interval, k >= 0.
type Rate struct {
	expr     string
	loc      *time.Location
	value    int64
	unit     string
	interval time.Duration
	anchor   time.Time
}

var rateUnits = map[string]struct {
	d      time.Duration
	plural bool
}{
	"minute":  {time.Minute, false},
	"minutes": {time.Minute, true},
	"hour":    {time.Hour, false},
	"hours":   {time.Hour, true},
	"day":     {24 * time.Hour, false},
	"days":    {24 * time.Hour, true},
}

func parseRate(full, body string, loc *time.Location, anchor time.Time) (*Rate, error) {
	parts := strings.Fields(body)
	if len(parts) != 2 {
		return nil, &Error{Expression: full, Field: "rate", Value: body, Reason: "want rate(value unit)"}
	}
	vs, us := parts[0], parts[1]
	var v int64
	if len(vs) == 0 || len(vs) > 18 {
		return nil, &Error{Expression: full, Field: "rate value", Value: vs, Reason: "not a positive integer"}
	}
	for i := 0; i < len(vs); i++ {
		if vs[i] < '0' || vs[i] > '9' {
			return nil, &Error{Expression: full, Field: "rate value", Value: vs, Reason: "not a positive integer"}
		}
		v = v*10 + int64(vs[i]-'0')
	}
	if v < 1 {
		return nil, &Error{Expression: full, Field: "rate value", Value: vs, Reason: "must be at least 1"}
	}
	u, ok := rateUnits[us]
	if !ok {
		return nil, &Error{Expression: full, Field: "rate unit", Value: us,
			Reason: "want minute, minutes, hour, hours, day or days"}
	}
	if !u.plural && v != 1 {
		return nil, &Error{Expression: full, Field: "rate unit", Value: us,
			Reason: "the singular unit is only valid with the value 1"}
	}
	if v > int64(math.MaxInt64/u.d) {
		return nil, &Error{Expression: full, Field: "rate value", Value: vs, Reason: "too large"}
	}
	return &Rate{
		expr:     full,
		loc:      loc,
		value:    v,
		unit:     us,
		interval: time.Duration(v) * u.d,
		anchor:   anchor.Truncate(time.Minute).In(loc),
	}, nil
}

// Next returns the first anchor + k*interval (k >= 0) strictly after after.
func (r *Rate) Next(after time.Time) (time.Time, bool) {
	a := r.anchor.Unix()
	step := int64(r.interval / time.Second)
	n := after.Unix() // floor: a whole-second slot s is after `after` iff s > n
	if n < a {
		return r.anchor, true
	}
	k := (n-a)/step + 1
	if k > (math.MaxInt64-a)/step {
		return time.Time{}, false
	}
	return time.Unix(a+k*step, 0).In(r.loc), true
}

// Interval is the fixed period (a day is 24 hours).
func (r *Rate) Interval() time.Duration { return r.interval }

// Anchor is the first slot (the anchor truncated to the minute).
func (r *Rate) Anchor() time.Time { return r.anchor }

// WithAnchor returns a copy anchored at anchor (truncated to the minute).
func (r *Rate) WithAnchor(anchor time.Time) *Rate {
	c := *r
	c.anchor = anchor.Truncate(time.Minute).In(r.loc)
	return &c
}

func (r *Rate) Kind() Kind               { return KindRate }
func (r *Rate) String() string           { return r.expr }
func (r *Rate) Location() *time.Location { return r.loc }
