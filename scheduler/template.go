package scheduler

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A placeholder of Stepwise's in a target's execution name or input:
//
//	<stepwise.scheduled-date[:FORMAT[:OFFSET]]>        default FORMAT yyyyMMdd
//	<stepwise.scheduled-local-time[:FORMAT[:OFFSET]]>  default FORMAT yyyyMMdd'T'HHmmss
//
// is the firing's time in the schedule's zone, moved by OFFSET, written
// in FORMAT. FORMAT is made of yyyy, yy, MM, dd, HH, mm, ss and the
// separators - _ . T (an empty FORMAT is the default; mm without HH is
// refused, as the month mistyped). OFFSET is one or more
// signed steps applied left to right: Nd (days, at the same local time),
// Nh (hours), Nbd (business days of the schedule's calendar, Monday to
// Friday without one: -1bd is the business day before the date). A
// night's run at 02:00 on the 28th named by the day before:
// <stepwise.scheduled-date:yyyyMMdd:-1d> is 20261127; by the business day
// before, over a weekend: <stepwise.scheduled-date::-1bd>. The offsets
// of one text add up to at most MaxOffsetDays.
type placeholder struct {
	format []string // tokens and separators
	steps  []offsetStep
}

type offsetStep struct {
	n    int
	unit string // d, h or bd
}

var (
	placeholderPattern = regexp.MustCompile(`<stepwise\.[^<>]*>`)
	offsetPattern      = regexp.MustCompile(`^([+-])(\d{1,4})(bd|d|h)`)
	formatTokens       = []string{"yyyy", "yy", "MM", "dd", "HH", "mm", "ss", "-", "_", ".", "T"}
)

// defaultFormats are the formats of the placeholders without one.
var defaultFormats = map[string]string{
	"stepwise.scheduled-date":       "yyyyMMdd",
	"stepwise.scheduled-local-time": "yyyyMMddTHHmmss",
}

// parsePlaceholder reads a placeholder, text between < and >.
func parsePlaceholder(text string) (*placeholder, error) {
	parts := strings.Split(text, ":")
	def, ok := defaultFormats[parts[0]]
	if !ok {
		return nil, fmt.Errorf("unknown placeholder (stepwise.scheduled-date and stepwise.scheduled-local-time are Stepwise's)")
	}
	if len(parts) > 3 {
		return nil, fmt.Errorf("too many parts: <%s[:FORMAT[:OFFSET]]>", parts[0])
	}
	format := def
	if len(parts) > 1 && parts[1] != "" {
		format = parts[1]
	}
	p := &placeholder{}
	for rest := format; rest != ""; {
		tok := ""
		for _, t := range formatTokens {
			if strings.HasPrefix(rest, t) {
				tok = t
				break
			}
		}
		if tok == "" {
			return nil, fmt.Errorf("the format %q has %q where yyyy, yy, MM, dd, HH, mm, ss or a separator (- _ . T) goes", format, rest)
		}
		p.format = append(p.format, tok)
		rest = rest[len(tok):]
	}
	if slices.Contains(p.format, "mm") && !slices.Contains(p.format, "HH") {
		return nil, fmt.Errorf("the format %q has minutes (mm) without hours (HH): the month is MM", format)
	}
	if len(parts) > 2 {
		off := parts[2]
		if off == "" {
			return nil, fmt.Errorf("an empty offset: give one, e.g. -1d, +9h or -1bd, or leave out its colon")
		}
		for rest := off; rest != ""; {
			m := offsetPattern.FindStringSubmatch(rest)
			if m == nil {
				return nil, fmt.Errorf("the offset %q has %q where a signed step goes: +Nd, -Nd, +Nh, -Nh, +Nbd or -Nbd", off, rest)
			}
			n, _ := strconv.Atoi(m[2])
			if m[1] == "-" {
				n = -n
			}
			p.steps = append(p.steps, offsetStep{n: n, unit: m[3]})
			rest = rest[len(m[0]):]
		}
	}
	return p, nil
}

// usesBusinessDays says whether an offset counts business days.
func (p *placeholder) usesBusinessDays() bool {
	for _, s := range p.steps {
		if s.unit == "bd" {
			return true
		}
	}
	return false
}

// render writes local (a time in the schedule's zone) moved by the
// offset, business days counted on cal (weekdays only when nil).
func (p *placeholder) render(local time.Time, cal *Calendar) string {
	t := local
	for _, s := range p.steps {
		switch s.unit {
		case "d":
			t = addDays(t, s.n)
		case "h":
			t = t.Add(time.Duration(s.n) * time.Hour)
		case "bd":
			dir, n := 1, s.n
			if n < 0 {
				dir, n = -1, -n
			}
			for ; n > 0; n-- {
				next, ok := cal.shift(addDays(t, dir), dir)
				if !ok {
					break
				}
				t = next
			}
		}
	}
	var b strings.Builder
	for _, tok := range p.format {
		switch tok {
		case "yyyy":
			fmt.Fprintf(&b, "%04d", t.Year())
		case "yy":
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case "MM":
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case "dd":
			fmt.Fprintf(&b, "%02d", t.Day())
		case "HH":
			fmt.Fprintf(&b, "%02d", t.Hour())
		case "mm":
			fmt.Fprintf(&b, "%02d", t.Minute())
		case "ss":
			fmt.Fprintf(&b, "%02d", t.Second())
		default:
			b.WriteString(tok)
		}
	}
	return b.String()
}

// MaxOffsetDays bounds the offsets of one text's placeholders together:
// their steps add up to at most this many days (ten years), a business
// day counted as a day and an hour as a twenty-fourth of one, so that a
// firing renders its name and input in little time.
const MaxOffsetDays = 3660

// days is how far the offset moves, in days, for MaxOffsetDays.
func (p *placeholder) days() int {
	total := 0
	for _, s := range p.steps {
		n := max(s.n, -s.n)
		if s.unit == "h" {
			n = (n + 23) / 24
		}
		total += n
	}
	return total
}

// CheckTemplate refuses a text (an execution name template or an input)
// whose Stepwise placeholders do not parse, saying which and why, or
// whose offsets add up to more than MaxOffsetDays.
func CheckTemplate(text string) error {
	days := 0
	for _, m := range placeholderPattern.FindAllString(text, -1) {
		p, err := parsePlaceholder(m[1 : len(m)-1])
		if err != nil {
			return fmt.Errorf("the placeholder %s is not valid: %v", m, err)
		}
		days += p.days()
	}
	if days > MaxOffsetDays {
		return fmt.Errorf("the offsets of its placeholders add up to %d days, more than the %d (ten years) they may (a business day counts as a day, 24 hours as a day)", days, MaxOffsetDays)
	}
	return nil
}

// usesBusinessDays says whether a text's placeholders count business
// days.
func usesBusinessDays(text string) bool {
	for _, m := range placeholderPattern.FindAllString(text, -1) {
		if p, err := parsePlaceholder(m[1 : len(m)-1]); err == nil && p.usesBusinessDays() {
			return true
		}
	}
	return false
}

// expandPlaceholders substitutes Stepwise's placeholders in text for a
// firing at local (in the schedule's zone); one that does not parse, or
// whose offset goes past MaxOffsetDays with those before it (refused when
// the schedule was written), stays as it is.
func expandPlaceholders(text string, local time.Time, cal *Calendar) string {
	if !strings.Contains(text, "<stepwise.") {
		return text
	}
	days := 0
	return placeholderPattern.ReplaceAllStringFunc(text, func(m string) string {
		p, err := parsePlaceholder(m[1 : len(m)-1])
		if err != nil {
			return m
		}
		if days += p.days(); days > MaxOffsetDays {
			return m
		}
		return p.render(local, cal)
	})
}
