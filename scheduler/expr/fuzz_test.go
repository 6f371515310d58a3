package expr

import (
	"errors"
	"testing"
	"time"
)

var fuzzZones = []string{
	"", "Asia/Tokyo", "America/New_York", "Australia/Lord_Howe", "Europe/London",
	"Asia/Kolkata", "Pacific/Apia", "America/St_Johns", "Asia/Kathmandu", "America/Santiago",
}

// cronMatches reports whether t is a slot of c: its wall clock matches every
// field and t is that wall clock's first instant.
func cronMatches(c *Cron, t time.Time) bool {
	w := t.In(c.loc)
	y, mo, d := w.Date()
	if w.Second() != 0 || w.Nanosecond() != 0 || y < minYear || y > maxYear {
		return false
	}
	if !c.years.has(y-minYear) || !c.months.has(int(mo)) || !c.hours.has(w.Hour()) || !c.minutes.has(w.Minute()) {
		return false
	}
	if !c.dayMatches(y, int(mo), d, daysIn(y, int(mo))) {
		return false
	}
	first, ok := resolve(c.loc, civil{year: y, month: int(mo), day: d, hour: w.Hour(), minute: w.Minute()})
	return ok && first.Equal(t)
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		"cron(0 10 * * ? *)", "cron(0/15 * * * ? *)", "cron(30 2 * * ? *)", "cron(0 * * * ? *)",
		"cron(0 0 L * ? *)", "cron(0 0 LW * ? *)", "cron(0 0 15W * ? *)", "cron(15 10 ? * 6L 2022-2023)",
		"cron(0 9 ? * 2#1 *)", "cron(0 0 29 2 ? *)", "cron(0 0 30 2 ? *)", "cron(50-10/5 22-1 ? * FRI-MON *)",
		"cron(0 0 1 1 ? 2199)", "cron(* * * * ? *)", "cron(0 0 ? * L *)", "cron(0 0 1 JAN-MAR/2 ? 2024/3)",
		"rate(1 minute)", "rate(5 minutes)", "rate(1 day)", "rate(12 hours)", "rate(5 minute)",
		"at(2024-03-10T02:30:00)", "at(2024-11-03T01:30:00)", "at(2030-01-01T00:00:00)", "at(2024-02-30T00:00:00)",
		"cron(0 0 * * * *)", "", "cron()", "rate()", "at()",
	}
	for i, s := range seeds {
		f.Add(s, uint8(i), int64(1704067200+int64(i)*86400*37))
	}
	anchor := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	lo, hi := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC).Unix()

	f.Fuzz(func(t *testing.T, s string, zone uint8, afterSec int64) {
		tz := fuzzZones[int(zone)%len(fuzzZones)]
		e, err := ParseAt(s, tz, anchor)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || err.Error() != "Invalid Schedule Expression "+s+"." {
				t.Fatalf("ParseAt(%q): unexpected error %T %v", s, err, err)
			}
			return
		}
		if afterSec < lo || afterSec > hi {
			afterSec = lo + (afterSec%(hi-lo)+(hi-lo))%(hi-lo)
		}
		after := time.Unix(afterSec, 0)

		check := func(name string, e Expr, start, end *time.Time) {
			prev := after
			for i := 0; i < 12; i++ {
				next, ok := e.Next(prev)
				if !ok {
					break
				}
				if !next.After(prev) {
					t.Fatalf("%s %q %s: Next(%s) = %s, not after", name, s, tz, prev, next)
				}
				if start != nil && next.Before(*start) || end != nil && !next.Before(*end) {
					t.Fatalf("%s %q: slot %s outside [%v, %v)", name, s, next, start, end)
				}
				switch x := e.(type) {
				case *Cron:
					if !cronMatches(x, next) {
						t.Fatalf("%q %s: Next(%s) = %s does not match", s, tz, prev, next)
					}
					// Nothing matches in between (checked over short spans).
					if next.Sub(prev) <= 3*time.Hour {
						for m := prev.Truncate(time.Minute).Add(time.Minute); m.Before(next); m = m.Add(time.Minute) {
							if m.After(prev) && cronMatches(x, m) {
								t.Fatalf("%q %s: Next(%s) = %s skips %s", s, tz, prev, next, m)
							}
						}
					}
				case *At:
					if !next.Equal(x.Time()) {
						t.Fatalf("%q: at() slot %s, want %s", s, next, x.Time())
					}
				case *Rate:
					// In seconds: spans can exceed time.Duration's 292 years.
					d, step := next.Unix()-x.Anchor().Unix(), int64(x.Interval()/time.Second)
					minimal := next.Equal(x.Anchor()) || next.Unix()-step <= prev.Unix()
					if d < 0 || d%step != 0 || next.Nanosecond() != 0 || !minimal {
						t.Fatalf("%q: rate slot %s off the grid (anchor %s, prev %s)", s, next, x.Anchor(), prev)
					}
				}
				prev = next
			}
		}
		check("plain", e, nil, nil)
		start, end := after.Add(90*time.Minute), after.Add(40*24*time.Hour)
		b := Bounded(e, &start, &end)
		if _, isAt := e.(*At); isAt {
			if b != e {
				t.Fatalf("Bounded(at) changed the expression")
			}
			return
		}
		check("bounded", b, &start, &end)
		if got := Slots(e, after, after.Add(24*time.Hour), 50); len(got) > 50 {
			t.Fatalf("Slots returned %d > max", len(got))
		}
	})
}
