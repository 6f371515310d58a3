package jsonata

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Partial port of jsonata.js parseDateTime ($toMillis with a picture).

type dtPart struct {
	comp  rune
	pres  string
	maxW  int
	group int
}

func parseDateTime(c *callCtx, s, pic string) (any, error) {
	var re strings.Builder
	re.WriteString("^")
	var parts []*dtPart
	rs := []rune(pic)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r == ']' && i+1 < len(rs) && rs[i+1] == ']' {
			re.WriteString(regexp.QuoteMeta("]"))
			i++
			continue
		}
		if r != '[' {
			re.WriteString(regexp.QuoteMeta(string(r)))
			continue
		}
		if i+1 < len(rs) && rs[i+1] == '[' {
			re.WriteString(regexp.QuoteMeta("["))
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
		p := &dtPart{comp: marker[0], pres: string(marker[1:]), maxW: -1}
		if k := strings.LastIndex(p.pres, ","); k >= 0 {
			w := p.pres[k+1:]
			p.pres = p.pres[:k]
			if _, hi, ok := strings.Cut(w, "-"); ok && hi != "*" {
				p.maxW, _ = strconv.Atoi(hi)
			}
		}
		if !strings.ContainsRune("YMDdFHhPmsfZzXxWwCE", p.comp) {
			return nil, argErr("D3132", c, "Unknown component specifier "+string(p.comp)+" in date/time picture string")
		}
		isName := strings.HasPrefix(p.pres, "N") || strings.HasPrefix(p.pres, "n") || (p.pres == "" && p.comp == 'F')
		if isName && !strings.ContainsRune("MFxP", p.comp) {
			return nil, argErr("D3133", c, "The 'name' modifier can only be applied to months and days in the date/time picture string, not "+string(p.comp))
		}
		next := end + 1
		adjacent := next < len(rs) && rs[next] == '['
		var g string
		switch {
		case p.comp == 'P':
			g = `[aApP][mM]`
		case p.comp == 'Z':
			g = `Z|[+-][0-9]{1,2}(?::?[0-9]{2})?`
		case p.comp == 'z':
			g = `GMT[+-][0-9]{1,2}(?::?[0-9]{2})?`
		case isName:
			g = `[a-zA-Z]+`
		case strings.HasPrefix(p.pres, "w") || strings.HasPrefix(p.pres, "W"):
			g = `[a-zA-Z][a-zA-Z ,\-]*?`
		case strings.HasPrefix(p.pres, "I") || strings.HasPrefix(p.pres, "i"):
			g = `[IVXLCDMivxlcdm]+`
		case strings.HasPrefix(p.pres, "A") || strings.HasPrefix(p.pres, "a"):
			g = `[a-zA-Z]+`
		default:
			n := strings.Count(p.pres, "0") + strings.Count(p.pres, "1") + strings.Count(p.pres, "#")
			switch {
			case adjacent && n > 0:
				g = `[0-9]{` + strconv.Itoa(n) + `}`
			case adjacent && p.maxW > 0:
				g = `[0-9]{1,` + strconv.Itoa(p.maxW) + `}`
			default:
				g = `[0-9]+`
			}
			if strings.HasSuffix(p.pres, "o") {
				g += `(?:st|nd|rd|th)?`
			}
		}
		re.WriteString("(" + g + ")")
		parts = append(parts, p)
	}
	re.WriteString("$")
	rx, err := regexp.Compile(re.String())
	if err != nil {
		return nil, argErr("D3110", c, "invalid picture")
	}
	m := rx.FindStringSubmatch(s)
	vals := map[rune]int{}
	offset, hasOffset := 0, false
	pm := -1
	for i, p := range parts {
		if m == nil {
			break
		}
		txt := m[i+1]
		switch {
		case p.comp == 'P':
			if strings.EqualFold(txt, "pm") {
				pm = 1
			} else {
				pm = 0
			}
			continue
		case p.comp == 'Z' || p.comp == 'z':
			txt = strings.TrimPrefix(txt, "GMT")
			hasOffset = true
			if txt == "Z" {
				continue
			}
			sign := 1
			if txt[0] == '-' {
				sign = -1
			}
			body := strings.ReplaceAll(txt[1:], ":", "")
			h, mm := 0, 0
			if len(body) <= 2 {
				h, _ = strconv.Atoi(body)
			} else {
				h, _ = strconv.Atoi(body[:len(body)-2])
				mm, _ = strconv.Atoi(body[len(body)-2:])
			}
			offset = sign * (h*60 + mm)
			continue
		}
		var v float64
		isName := strings.HasPrefix(p.pres, "N") || strings.HasPrefix(p.pres, "n") || (p.pres == "" && p.comp == 'F')
		switch {
		case isName:
			names := monthNames
			if p.comp == 'F' {
				names = dayNames
			}
			found := false
			for k, n := range names {
				if strings.HasPrefix(strings.ToLower(n), strings.ToLower(txt)) {
					v, found = float64(k+1), true
					break
				}
			}
			if !found {
				return nil, nil
			}
		case strings.HasPrefix(p.pres, "w") || strings.HasPrefix(p.pres, "W"):
			v = wordsToNumber(txt)
		case strings.HasPrefix(p.pres, "I") || strings.HasPrefix(p.pres, "i"):
			v = fromRoman(txt)
		case strings.HasPrefix(p.pres, "A"):
			v = fromLetters(strings.ToUpper(txt), 'A')
		case strings.HasPrefix(p.pres, "a"):
			v = fromLetters(strings.ToLower(txt), 'a')
		default:
			digits := strings.TrimRight(txt, "stndrh")
			n, err := strconv.Atoi(digits)
			if err != nil {
				return nil, nil
			}
			v = float64(n)
		}
		vals[p.comp] = int(v)
	}
	if h, ok := vals['h']; ok {
		if pm == 1 && h < 12 {
			h += 12
		} else if pm == 0 && h == 12 {
			h = 0
		}
		vals['H'] = h
	}
	// gap check over the most-to-least significant components
	order := "YMDHmsf"
	if _, ok := vals['d']; ok {
		order = "YdHmsf"
	}
	for _, x := range "XWxw" {
		if _, ok := vals[x]; ok {
			return nil, argErr("D3136", c, "The date/time picture string is missing specifiers required to parse the timestamp")
		}
	}
	if hasGap(order, vals) {
		return nil, argErr("D3136", c, "The date/time picture string is missing specifiers required to parse the timestamp")
	}
	if m == nil || len(vals) == 0 {
		return nil, nil
	}
	now := time.Now().UTC()
	get := func(k rune, leading bool, def int, nowVal int) int {
		if v, ok := vals[k]; ok {
			return v
		}
		if leading {
			return nowVal
		}
		return def
	}
	// leading components missing are taken from now, trailing default
	firstPresent := len(order)
	for i, k := range order {
		if _, ok := vals[k]; ok {
			firstPresent = i
			break
		}
	}
	lead := func(k rune) bool { return strings.IndexRune(order, k) < firstPresent }
	var t time.Time
	if order == "YdHmsf" {
		y := get('Y', lead('Y'), 1970, now.Year())
		t = time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, vals['d']-1)
	} else {
		y := get('Y', lead('Y'), 1970, now.Year())
		mo := get('M', lead('M'), 1, int(now.Month()))
		d := get('D', lead('D'), 1, now.Day())
		t = time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	}
	t = t.Add(time.Duration(vals['H'])*time.Hour + time.Duration(vals['m'])*time.Minute + time.Duration(vals['s'])*time.Second + time.Duration(vals['f'])*time.Millisecond)
	ms := float64(t.UnixMilli())
	if hasOffset {
		ms -= float64(offset) * 60000
	}
	return math.Trunc(ms), nil
}

func hasGap(order string, vals map[rune]int) bool {
	seen, ended := false, false
	for _, k := range order {
		_, ok := vals[k]
		if ok && ended {
			return true
		}
		if ok {
			seen = true
		} else if seen {
			ended = true
		}
	}
	return false
}
