package expr

import (
	"math/bits"
	"strings"
	"time"
)

const (
	minYear = 1970
	maxYear = 2199
)

// bitset holds up to 256 values, indexed from a field's base.
type bitset [4]uint64

func (b *bitset) set(i int)      { b[i>>6] |= 1 << uint(i&63) }
func (b *bitset) has(i int) bool { return i >= 0 && i < 256 && b[i>>6]&(1<<uint(i&63)) != 0 }

// next returns the smallest set index j with i <= j <= limit.
func (b *bitset) next(i, limit int) (int, bool) {
	if i < 0 {
		i = 0
	}
	for i <= limit && i < 256 {
		w := b[i>>6] >> uint(i&63)
		if w != 0 {
			j := i + bits.TrailingZeros64(w)
			if j <= limit {
				return j, true
			}
			return 0, false
		}
		i = (i | 63) + 1
	}
	return 0, false
}

type domKind uint8

const (
	domAny            domKind = iota // "?": the day is chosen by Day-of-week
	domSet                           // listed days
	domLast                          // L
	domLastWeekday                   // LW
	domNearestWeekday                // nW
)

type dowKind uint8

const (
	dowAny  dowKind = iota // "?": the day is chosen by Day-of-month
	dowSet                 // listed weekdays (1 = Sunday)
	dowLast                // dL: last weekday d of the month
	dowNth                 // d#k: k-th weekday d of the month
)

// Cron is a cron(minutes hours day-of-month month day-of-week year) schedule.
type Cron struct {
	expr string
	loc  *time.Location

	minutes, hours, months, years bitset // years indexed from 1970

	dom  domKind
	days bitset // domSet
	domN int    // domNearestWeekday

	dow      dowKind
	weekdays bitset // dowSet, 1..7
	dowD     int    // dowLast, dowNth
	dowK     int    // dowNth
}

type fieldSpec struct {
	name     string
	min, max int
	base     int // index of value v in the bitset is v - base
	names    map[string]int
	step     bool // "/" allowed
	wrap     bool // a-b with a > b wraps around
}

var (
	monthNames = map[string]int{"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6,
		"JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}
	dayNames = map[string]int{"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}

	minuteField = fieldSpec{name: "Minutes", min: 0, max: 59, step: true, wrap: true}
	hourField   = fieldSpec{name: "Hours", min: 0, max: 23, step: true, wrap: true}
	domField    = fieldSpec{name: "Day-of-month", min: 1, max: 31, step: true, wrap: true}
	monthField  = fieldSpec{name: "Month", min: 1, max: 12, names: monthNames, step: true, wrap: true}
	dowField    = fieldSpec{name: "Day-of-week", min: 1, max: 7, names: dayNames, wrap: true}
	yearField   = fieldSpec{name: "Year", min: minYear, max: maxYear, base: minYear, step: true}
)

type cronParser struct{ full string }

func (p cronParser) err(f *fieldSpec, value, reason string) error {
	name := ""
	if f != nil {
		name = f.name
	}
	return &Error{Expression: p.full, Field: name, Value: value, Reason: reason}
}

func parseCron(full, body string, loc *time.Location) (*Cron, error) {
	p := cronParser{full: full}
	fs := strings.Fields(body)
	if len(fs) != 6 {
		return nil, p.err(nil, body, "want 6 fields: minutes hours day-of-month month day-of-week year")
	}
	for i := range fs {
		fs[i] = strings.ToUpper(fs[i])
	}
	c := &Cron{expr: full, loc: loc}
	var err error
	if c.minutes, err = p.list(&minuteField, fs[0]); err != nil {
		return nil, err
	}
	if c.hours, err = p.list(&hourField, fs[1]); err != nil {
		return nil, err
	}
	if err = p.dayOfMonth(c, fs[2]); err != nil {
		return nil, err
	}
	if c.months, err = p.list(&monthField, fs[3]); err != nil {
		return nil, err
	}
	if err = p.dayOfWeek(c, fs[4]); err != nil {
		return nil, err
	}
	if c.years, err = p.list(&yearField, fs[5]); err != nil {
		return nil, err
	}
	switch {
	case c.dom == domAny && c.dow == dowAny:
		return nil, p.err(nil, fs[2]+" "+fs[4], "Day-of-month and Day-of-week cannot both be ?")
	case c.dom != domAny && c.dow != dowAny:
		return nil, p.err(nil, fs[2]+" "+fs[4], "one of Day-of-month and Day-of-week must be ?")
	}
	return c, nil
}

func (p cronParser) dayOfMonth(c *Cron, s string) error {
	f := &domField
	switch {
	case s == "?":
		c.dom = domAny
		return nil
	case s == "L":
		c.dom = domLast
		return nil
	case s == "LW":
		c.dom = domLastWeekday
		return nil
	case strings.ContainsAny(s, "?LW"):
		if strings.HasSuffix(s, "W") && !strings.ContainsAny(s[:len(s)-1], "?LW,-/*") {
			n, ok := p.value(f, s[:len(s)-1])
			if !ok {
				return p.err(f, s, "W needs a single day 1-31 before it")
			}
			c.dom, c.domN = domNearestWeekday, n
			return nil
		}
		return p.err(f, s, "?, L, LW and nW must stand alone in the field")
	}
	set, err := p.list(f, s)
	if err != nil {
		return err
	}
	c.dom, c.days = domSet, set
	return nil
}

func (p cronParser) dayOfWeek(c *Cron, s string) error {
	f := &dowField
	switch {
	case s == "?":
		c.dow = dowAny
		return nil
	case s == "L":
		// "The L wildcard in the ... Day-of-week field specifies the last day
		// of the week": Saturday.
		c.dow = dowSet
		c.weekdays.set(7)
		return nil
	case strings.Contains(s, "#"):
		i := strings.IndexByte(s, '#')
		d, ok := p.value(f, s[:i])
		if !ok || strings.ContainsAny(s[:i], ",-/*?L") {
			return p.err(f, s, "# needs a single day of week 1-7 or SUN-SAT before it, and must stand alone")
		}
		k, ok := p.number(s[i+1:])
		if !ok || k < 1 || k > 5 {
			return p.err(f, s, "# needs an instance 1-5 after it")
		}
		c.dow, c.dowD, c.dowK = dowNth, d, k
		return nil
	case strings.HasSuffix(s, "L"):
		d, ok := p.value(f, s[:len(s)-1])
		if !ok || strings.ContainsAny(s[:len(s)-1], ",-/*?L") {
			return p.err(f, s, "L needs a single day of week before it, and must stand alone")
		}
		c.dow, c.dowD = dowLast, d
		return nil
	case strings.ContainsAny(s, "?L"):
		return p.err(f, s, "?, L, dL and d#k must stand alone in the field")
	}
	set, err := p.list(f, s)
	if err != nil {
		return err
	}
	c.dow, c.weekdays = dowSet, set
	return nil
}

// number parses 1-9 decimal digits.
func (cronParser) number(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// value parses a number or name within the field's range.
func (p cronParser) value(f *fieldSpec, s string) (int, bool) {
	if v, ok := f.names[s]; ok {
		return v, true
	}
	n, ok := p.number(s)
	if !ok || n < f.min || n > f.max {
		return 0, false
	}
	return n, true
}

// list parses "item,item,..." where an item is *, */n, a, a-b, a/n or a-b/n.
func (p cronParser) list(f *fieldSpec, s string) (bitset, error) {
	var set bitset
	if s == "" {
		return set, p.err(f, s, "empty field")
	}
	for _, item := range strings.Split(s, ",") {
		if err := p.item(f, item, &set); err != nil {
			return set, err
		}
	}
	return set, nil
}

func (p cronParser) item(f *fieldSpec, item string, set *bitset) error {
	if item == "" {
		return p.err(f, item, "empty list item")
	}
	base, stepStr, hasStep := strings.Cut(item, "/")
	step := 1
	if hasStep {
		if !f.step {
			return p.err(f, item, "/ is not allowed in this field")
		}
		n, ok := p.number(stepStr)
		if !ok || n < 1 || n > f.max {
			return p.err(f, item, "increment must be an integer from 1 to "+itoa(f.max))
		}
		step = n
	}
	var lo, hi int
	switch {
	case base == "*":
		lo, hi = f.min, f.max
	case strings.Contains(base, "-"):
		a, b, _ := strings.Cut(base, "-")
		var ok1, ok2 bool
		lo, ok1 = p.value(f, a)
		hi, ok2 = p.value(f, b)
		if !ok1 || !ok2 {
			return p.err(f, item, "range bounds must be values "+p.describe(f))
		}
	default:
		v, ok := p.value(f, base)
		if !ok {
			return p.err(f, item, "value must be "+p.describe(f))
		}
		lo, hi = v, v
		if hasStep {
			hi = f.max
		}
	}
	if lo <= hi {
		for v := lo; v <= hi; v += step {
			set.set(v - f.base)
		}
		return nil
	}
	if !f.wrap {
		return p.err(f, item, "range start is after its end")
	}
	span := f.max - f.min + 1
	count := (hi-lo+span)%span + 1
	for i := 0; i < count; i += step {
		set.set(f.min + (lo-f.min+i)%span - f.base)
	}
	return nil
}

func (cronParser) describe(f *fieldSpec) string {
	d := itoa(f.min) + "-" + itoa(f.max)
	switch f.name {
	case "Month":
		d += " or JAN-DEC"
	case "Day-of-week":
		d += " or SUN-SAT"
	}
	return d
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// Next returns the first slot strictly after after. Wall-clock times that a
// spring-forward gap skips do not fire; wall-clock times that a fall-back
// overlap repeats fire once, at their first occurrence.
func (c *Cron) Next(after time.Time) (time.Time, bool) {
	w := after.In(c.loc)
	y, mo, d := w.Date()
	if y > maxYear {
		return time.Time{}, false
	}
	cur := civil{year: y, month: int(mo), day: d, hour: w.Hour(), minute: w.Minute()}
	if y < minYear {
		cur = civil{year: minYear, month: 1, day: 1}
	}
	// Mapping a wall-clock time to its first instant is increasing, so no
	// wall time before after's own can give a slot after after; candidates
	// from there on that land at or before after (the rest of after's
	// minute, the second pass of an overlap) or in a gap are stepped over.
	for {
		cand, ok := c.nextCivil(cur)
		if !ok {
			return time.Time{}, false
		}
		t, exists := resolve(c.loc, cand)
		if exists && t.After(after) {
			return t, true
		}
		cur = cand
		cur.minute++
	}
}

// nextCivil returns the first matching wall-clock minute at or after cur
// (whose fields may overflow: minute 60, day 32, ...).
func (c *Cron) nextCivil(cur civil) (civil, bool) {
	y, mo, d, h, mi := cur.year, cur.month, cur.day, cur.hour, cur.minute
	for y <= maxYear {
		if y < minYear {
			y, mo, d, h, mi = minYear, 1, 1, 0, 0
		}
		ny, ok := c.years.next(y-minYear, maxYear-minYear)
		if !ok {
			return civil{}, false
		}
		if ny+minYear != y {
			y, mo, d, h, mi = ny+minYear, 1, 1, 0, 0
		}
		for mo <= 12 {
			nm, ok := c.months.next(mo, 12)
			if !ok {
				break
			}
			if nm != mo {
				mo, d, h, mi = nm, 1, 0, 0
			}
			dim := daysIn(y, mo)
			for ; d <= dim; d, h, mi = d+1, 0, 0 {
				if !c.dayMatches(y, mo, d, dim) {
					continue
				}
				for h <= 23 {
					nh, ok := c.hours.next(h, 23)
					if !ok {
						break
					}
					if nh != h {
						h, mi = nh, 0
					}
					if nmi, ok := c.minutes.next(mi, 59); ok {
						return civil{year: y, month: mo, day: d, hour: h, minute: nmi}, true
					}
					h, mi = h+1, 0
				}
			}
			mo, d, h, mi = mo+1, 1, 0, 0
		}
		y, mo, d, h, mi = y+1, 1, 1, 0, 0
	}
	return civil{}, false
}

func (c *Cron) dayMatches(y, mo, d, dim int) bool {
	switch c.dom {
	case domSet:
		return c.days.has(d)
	case domLast:
		return d == dim
	case domLastWeekday:
		switch weekday(y, mo, dim) {
		case 6:
			return d == dim-1
		case 0:
			return d == dim-2
		}
		return d == dim
	case domNearestWeekday:
		n := c.domN
		if n > dim {
			return false
		}
		switch weekday(y, mo, n) {
		case 6: // Saturday: the Friday before, unless that leaves the month
			if n == 1 {
				return d == 3
			}
			return d == n-1
		case 0: // Sunday: the Monday after, unless that leaves the month
			if n == dim {
				return d == n-2
			}
			return d == n+1
		}
		return d == n
	}
	wd := weekday(y, mo, d) + 1 // 1 = Sunday
	switch c.dow {
	case dowSet:
		return c.weekdays.has(wd)
	case dowLast:
		return wd == c.dowD && d+7 > dim
	case dowNth:
		return wd == c.dowD && (d-1)/7+1 == c.dowK
	}
	return false
}

func (c *Cron) Kind() Kind               { return KindCron }
func (c *Cron) String() string           { return c.expr }
func (c *Cron) Location() *time.Location { return c.loc }
