package asl

import (
	"time"
)

// parseTimestamp parses a timestamp the way Step Functions accepts it:
// RFC 3339 with an uppercase "T" between date and time and an uppercase "Z"
// or a numeric offset, for example "2016-03-14T01:59:00Z". Fractional
// seconds are allowed.
func parseTimestamp(s string) (time.Time, bool) {
	if !timestampShape(s) {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// timestampShape checks the layout: YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM).
func timestampShape(s string) bool {
	const head = "dddd-dd-ddTdd:dd:dd"
	if len(s) < len(head)+1 {
		return false
	}
	for i := 0; i < len(head); i++ {
		c := s[i]
		if head[i] == 'd' {
			if c < '0' || c > '9' {
				return false
			}
		} else if c != head[i] {
			return false
		}
	}
	rest := s[len(head):]
	if rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 {
			return false
		}
		rest = rest[n:]
	}
	if rest == "Z" {
		return true
	}
	if len(rest) != 6 || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':' {
		return false
	}
	for _, i := range []int{1, 2, 4, 5} {
		if rest[i] < '0' || rest[i] > '9' {
			return false
		}
	}
	return true
}
