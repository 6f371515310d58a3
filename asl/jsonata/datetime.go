package jsonata

import (
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Partial port of jsonata.js datetime formatting ($fromMillis picture
// strings, XPath F&O 9.8.4). Week components (W, w, X, x) are approximate.

var monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
var dayNames = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

func parseTZ(tz string) (*time.Location, int, bool) {
	if len(tz) != 5 || (tz[0] != '+' && tz[0] != '-') {
		return nil, 0, false
	}
	h, err1 := strconv.Atoi(tz[1:3])
	m, err2 := strconv.Atoi(tz[3:5])
	if err1 != nil || err2 != nil {
		return nil, 0, false
	}
	off := h*60 + m
	if tz[0] == '-' {
		off = -off
	}
	return time.FixedZone(tz, off*60), off, true
}

func formatOffset(off int, pres string) (string, bool) {
	t := strings.HasSuffix(pres, "t")
	pres = strings.TrimSuffix(pres, "t")
	if t && off == 0 {
		return "Z", true
	}
	sign := "+"
	if off < 0 {
		sign = "-"
		off = -off
	}
	h, m := off/60, off%60
	digits := 0
	for _, r := range pres {
		if unicode.IsDigit(r) {
			digits++
		}
	}
	switch {
	case digits > 4:
		return "", false
	case digits <= 2 && !strings.ContainsAny(pres, ":"):
		hs := strconv.Itoa(h)
		if digits == 2 {
			hs = pad2(h)
		}
		if m != 0 {
			return sign + hs + ":" + pad2(m), true
		}
		return sign + hs, true
	case strings.Contains(pres, ":"):
		return sign + pad2(h) + ":" + pad2(m), true
	default:
		return sign + pad2(h) + pad2(m), true
	}
}

func pad2(i int) string {
	if i < 10 {
		return "0" + strconv.Itoa(i)
	}
	return strconv.Itoa(i)
}

func formatDateTime(c *callCtx, millis float64, picture any, tz any) (any, error) {
	loc, off := time.UTC, 0
	if s, ok := tz.(string); ok {
		if l, o, ok := parseTZ(s); ok {
			loc, off = l, o
		}
	}
	t := time.UnixMilli(int64(millis)).In(loc)
	pic, ok := picture.(string)
	if !ok {
		base := t.Format("2006-01-02T15:04:05.000")
		z, _ := formatOffset(off, "01:01t")
		return base + z, nil
	}
	var sb strings.Builder
	rs := []rune(pic)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r == ']' {
			if i+1 < len(rs) && rs[i+1] == ']' {
				i++
			}
			sb.WriteRune(']')
			continue
		}
		if r != '[' {
			sb.WriteRune(r)
			continue
		}
		if i+1 < len(rs) && rs[i+1] == '[' {
			sb.WriteRune('[')
			i++
			continue
		}
		end := -1
		for j := i + 1; j < len(rs); j++ {
			if rs[j] == ']' {
				end = j
				break
			}
		}
		if end < 0 {
			return nil, argErr("D3135", c, "No matching closing bracket ']' in date/time picture string")
		}
		var marker []rune
		for _, x := range rs[i+1 : end] {
			if !unicode.IsSpace(x) {
				marker = append(marker, x)
			}
		}
		i = end
		if len(marker) == 0 {
			continue
		}
		out, err := formatComponent(c, t, off, marker[0], string(marker[1:]))
		if err != nil {
			return nil, err
		}
		sb.WriteString(out)
	}
	return sb.String(), nil
}

func formatComponent(c *callCtx, t time.Time, off int, comp rune, rest string) (string, error) {
	pres, width := rest, ""
	if i := strings.LastIndex(rest, ","); i >= 0 {
		pres, width = rest[:i], rest[i+1:]
	}
	minW, maxW := -1, -1
	if width != "" {
		lo, hi, _ := strings.Cut(width, "-")
		if lo != "*" {
			minW, _ = strconv.Atoi(lo)
		}
		if hi != "" && hi != "*" {
			maxW, _ = strconv.Atoi(hi)
		}
	}
	var val int
	var names []string
	switch comp {
	case 'Y':
		val = t.Year()
	case 'M':
		val, names = int(t.Month()), monthNames
	case 'D':
		val = t.Day()
	case 'd':
		val = t.YearDay()
	case 'F':
		val, names = (int(t.Weekday())+6)%7+1, dayNames
	case 'W':
		_, val = t.ISOWeek()
	case 'X':
		val, _ = t.ISOWeek()
	case 'w', 'x':
		// week of month (ISO rule: week containing Thursday)
		th := t.AddDate(0, 0, 4-((int(t.Weekday())+6)%7+1))
		first := time.Date(th.Year(), th.Month(), 1, 0, 0, 0, 0, t.Location())
		fd := (int(first.Weekday())+6)%7 + 1
		firstThu := 1 + (4-fd+7)%7
		val = (th.Day()-firstThu)/7 + 1
		if comp == 'x' {
			val, names = int(th.Month()), monthNames
		}
	case 'H':
		val = t.Hour()
	case 'h':
		val = t.Hour() % 12
		if val == 0 {
			val = 12
		}
	case 'P':
		s := "am"
		if t.Hour() >= 12 {
			s = "pm"
		}
		if strings.HasPrefix(pres, "N") && !strings.HasPrefix(pres, "Nn") {
			s = strings.ToUpper(s)
		}
		return s, nil
	case 'm':
		val = t.Minute()
		if pres == "" {
			pres = "01"
		}
	case 's':
		val = t.Second()
		if pres == "" {
			pres = "01"
		}
	case 'f':
		ms := t.Nanosecond() / 1e6
		if pres == "" {
			pres = "1"
		}
		s := strconv.Itoa(ms)
		for len(s) < 3 {
			s = "0" + s
		}
		n := len(pres)
		if n < 3 {
			s = strings.TrimRight(s, "0")
			for len(s) < n {
				s += "0"
			}
		}
		return s, nil
	case 'Z', 'z':
		if pres == "" {
			pres = "01:01"
		}
		z, ok := formatOffset(off, pres)
		if !ok {
			return "", argErr("D3134", c, "The timezone integer format specifier cannot have more than four digits")
		}
		if comp == 'z' {
			return "GMT" + z, nil
		}
		return z, nil
	case 'C', 'E':
		return "ISO", nil
	default:
		return "", argErr("D3132", c, "Unknown component specifier "+string(comp)+" in date/time picture string")
	}
	if strings.HasPrefix(pres, "N") || strings.HasPrefix(pres, "n") || (pres == "" && comp == 'F') {
		if names == nil {
			return "", argErr("D3133", c, "The 'name' modifier can only be applied to months and days in the date/time picture string, not "+string(comp))
		}
		s := names[val-1]
		if maxW > 0 && len(s) > maxW {
			s = s[:maxW]
		}
		switch {
		case strings.HasPrefix(pres, "Nn"):
		case strings.HasPrefix(pres, "N"):
			s = strings.ToUpper(s)
		default:
			s = strings.ToLower(s)
		}
		return s, nil
	}
	if pres == "" {
		pres = "1"
	}
	picture := pres
	if strings.HasSuffix(picture, "o") {
		picture = strings.TrimSuffix(picture, "o") + ";o"
	}
	if minW > 0 && comp != 'Y' {
		for countDigits(picture) < minW {
			picture = "0" + picture
		}
	}
	res, err := formatInteger(c, float64(val), picture)
	if err != nil {
		return "", err
	}
	s := res.(string)
	if comp == 'Y' {
		if maxW > 0 && len(s) > maxW {
			s = s[len(s)-maxW:]
		}
		if maxW < 0 && minW == 2 && countDigits(pres) < 2 {
			s = s[len(s)-2:]
		}
	}
	return s, nil
}

func countDigits(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsDigit(r) || r == '#' {
			n++
		}
	}
	return n
}
