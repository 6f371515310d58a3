package expr

import "time"

// civil is a wall-clock time in some zone, to the second.
type civil struct {
	year                 int
	month, day           int
	hour, minute, second int
}

// wallSeconds is the wall-clock time read as if it were UTC, in Unix seconds.
func (c civil) wallSeconds() int64 {
	return daysFromCivil(c.year, c.month, c.day)*86400 +
		int64(c.hour)*3600 + int64(c.minute)*60 + int64(c.second)
}

func offsetAt(loc *time.Location, unix int64) int64 {
	_, off := time.Unix(unix, 0).In(loc).Zone()
	return int64(off)
}

// candidateOffsets gathers the UTC offsets that can be in force around wall
// clock w (w read as UTC seconds).
func candidateOffsets(loc *time.Location, w int64) []int64 {
	var offs []int64
	add := func(o int64) {
		for _, x := range offs {
			if x == o {
				return
			}
		}
		offs = append(offs, o)
	}
	for _, probe := range []int64{w - 2*86400, w - 86400, w, w + 86400, w + 2*86400} {
		add(offsetAt(loc, probe))
	}
	for _, o := range append([]int64(nil), offs...) {
		add(offsetAt(loc, w-o))
	}
	return offs
}

// resolve maps a wall-clock time in loc to an instant. When the wall time
// occurs more than once (fall-back overlap) it returns the earliest instant;
// when it does not occur (spring-forward gap) exists is false and t is the
// instant given by the offset in force before the gap (the wall time shifted
// later by the length of the gap).
func resolve(loc *time.Location, c civil) (t time.Time, exists bool) {
	w := c.wallSeconds()
	offs := candidateOffsets(loc, w)
	best, found := int64(0), false
	for _, o := range offs {
		u := w - o
		if offsetAt(loc, u) == o && (!found || u < best) {
			best, found = u, true
		}
	}
	if found {
		return time.Unix(best, 0).In(loc), true
	}
	// Gap: the largest candidate offset is the one after the transition;
	// the instant w - max lies before it, and its offset is the one before.
	maxO := offs[0]
	for _, o := range offs[1:] {
		if o > maxO {
			maxO = o
		}
	}
	before := offsetAt(loc, w-maxO)
	return time.Unix(w-before, 0).In(loc), false
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	yy := int64(y)
	if m <= 2 {
		yy--
	}
	var era int64
	if yy >= 0 {
		era = yy / 400
	} else {
		era = (yy - 399) / 400
	}
	yoe := yy - era*400
	mp := int64(m+9) % 12
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// weekday returns 0 for Sunday .. 6 for Saturday.
func weekday(y, m, d int) int {
	w := (daysFromCivil(y, m, d) + 4) % 7 // 1970-01-01 was a Thursday
	if w < 0 {
		w += 7
	}
	return int(w)
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
