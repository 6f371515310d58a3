package jsonata

import (
	"math"
	"strconv"
	"strings"

	"stepwise/jsonvalue"
)

// Port of jsonata.js formatNumber (XPath F&O 3.1 section 4.7).

type picParts struct {
	prefix, suffix, active, mantissa, integer, fractional, sub []rune
	exponent                                                   []rune
	hasExp                                                     bool
}

type picVars struct {
	intGroups      []int
	regular        int
	minInt         int
	scaling        int
	prefix, suffix string
	fracGroups     []int
	minFrac        int
	maxFrac        int
	minExp         int
	picture        string
}

func runeIndex(s []rune, sub string, from int) int {
	if from > len(s) {
		return -1
	}
	i := strings.Index(string(s[from:]), sub)
	if i < 0 {
		return -1
	}
	return from + len([]rune(string(s[from:])[:i]))
}

func runeLastIndex(s []rune, sub string) int {
	i := strings.LastIndex(string(s), sub)
	if i < 0 {
		return -1
	}
	return len([]rune(string(s)[:i]))
}

func formatPicture(c *callCtx, value float64, picture string, opts any) (any, error) {
	props := map[string]string{
		"decimal-separator": ".", "grouping-separator": ",", "exponent-separator": "e",
		"infinity": "Infinity", "minus-sign": "-", "NaN": "NaN", "percent": "%",
		"per-mille": "\u2030", "zero-digit": "0", "digit": "#", "pattern-separator": ";",
	}
	if o, ok := opts.(*jsonvalue.Object); ok {
		for k, v := range o.All() {
			if s, ok := v.(string); ok {
				props[k] = s
			}
		}
	}
	zs := []rune(props["zero-digit"])
	if len(zs) == 0 {
		// jsonata.js builds its digits with String.fromCodePoint(NaN).
		return nil, argErr("RangeError", c, "Invalid code point NaN")
	}
	zero := zs[0]
	var family []rune
	for i := range 10 {
		family = append(family, zero+rune(i))
	}
	isDigit := func(r rune) bool { return r >= zero && r < zero+10 }
	first := func(s string) rune {
		rs := []rune(s)
		if len(rs) == 0 {
			return -1
		}
		return rs[0]
	}
	dec, grp, expSep, digit, patSep := first(props["decimal-separator"]), first(props["grouping-separator"]), first(props["exponent-separator"]), first(props["digit"]), first(props["pattern-separator"])
	isActive := func(r rune) bool {
		return isDigit(r) || r == dec || r == expSep || r == grp || r == digit || r == patSep
	}
	subs := strings.Split(picture, props["pattern-separator"])
	if len(subs) > 2 {
		return nil, argErr("D3080", c, "The picture string must not contain more than one pattern separator")
	}
	split := func(sp string) picParts {
		s := []rune(sp)
		var p picParts
		p.sub = s
		pi := len(s)
		for i, r := range s {
			if isActive(r) && r != expSep {
				pi = i
				break
			}
		}
		p.prefix = s[:pi]
		si := -1
		for i := len(s) - 1; i >= 0; i-- {
			if isActive(s[i]) && s[i] != expSep {
				si = i
				break
			}
		}
		p.suffix = s[si+1:]
		if len(p.prefix) > len(s)-len(p.suffix) {
			p.active = nil
		} else {
			p.active = s[len(p.prefix) : len(s)-len(p.suffix)]
		}
		ep := runeIndex(s, string(expSep), len(p.prefix))
		if ep == -1 || ep > len(s)-len(p.suffix) {
			p.mantissa = p.active
		} else {
			// String.prototype.substring clamps its bounds: "0e" has an
			// exponent separator but no exponent digits.
			ep = min(ep-len(p.prefix), len(p.active))
			p.mantissa = p.active[:ep]
			p.exponent = p.active[min(ep+1, len(p.active)):]
			p.hasExp = true
		}
		dp := runeIndex(p.mantissa, string(dec), 0)
		if dp == -1 {
			p.integer = p.mantissa
			p.fractional = p.suffix
		} else {
			p.integer = p.mantissa[:dp]
			p.fractional = p.mantissa[dp+1:]
		}
		return p
	}
	count := func(rs []rune, f func(rune) bool) int {
		n := 0
		for _, r := range rs {
			if f(r) {
				n++
			}
		}
		return n
	}
	validate := func(p picParts) string {
		code := ""
		s := p.sub
		dp := runeIndex(s, string(dec), 0)
		if dp != runeLastIndex(s, string(dec)) {
			code = "D3081"
		}
		if runeIndex(s, props["percent"], 0) != runeLastIndex(s, props["percent"]) {
			code = "D3082"
		}
		if runeIndex(s, props["per-mille"], 0) != runeLastIndex(s, props["per-mille"]) {
			code = "D3083"
		}
		if runeIndex(s, props["percent"], 0) != -1 && runeIndex(s, props["per-mille"], 0) != -1 {
			code = "D3084"
		}
		if count(p.mantissa, func(r rune) bool { return isDigit(r) || r == digit }) == 0 {
			code = "D3085"
		}
		if count(p.active, func(r rune) bool { return !isActive(r) }) > 0 {
			code = "D3086"
		}
		if dp != -1 {
			if (dp > 0 && s[dp-1] == grp) || (dp+1 < len(s) && s[dp+1] == grp) {
				code = "D3087"
			}
		} else if len(p.integer) > 0 && p.integer[len(p.integer)-1] == grp {
			code = "D3088"
		}
		if strings.Contains(string(s), string([]rune{grp, grp})) {
			code = "D3089"
		}
		if od := runeIndex(p.integer, string(digit), 0); od != -1 && count(p.integer[:od], isDigit) > 0 {
			code = "D3090"
		}
		if od := runeLastIndex(p.fractional, string(digit)); od != -1 && count(p.fractional[od:], isDigit) > 0 {
			code = "D3091"
		}
		if p.hasExp && len(p.exponent) > 0 && (runeIndex(s, props["percent"], 0) != -1 || runeIndex(s, props["per-mille"], 0) != -1) {
			code = "D3092"
		}
		if p.hasExp && (len(p.exponent) == 0 || count(p.exponent, func(r rune) bool { return !isDigit(r) }) > 0) {
			code = "D3093"
		}
		return code
	}
	analyse := func(p picParts) picVars {
		groupPositions := func(part []rune, toLeft bool) []int {
			var pos []int
			gp := runeIndex(part, string(grp), 0)
			for gp != -1 {
				var seg []rune
				if toLeft {
					seg = part[:gp]
				} else {
					seg = part[gp:]
				}
				pos = append(pos, count(seg, func(r rune) bool { return isDigit(r) || r == digit }))
				gp = runeIndex(p.integer, string(grp), gp+1)
			}
			return pos
		}
		var v picVars
		v.intGroups = groupPositions(p.integer, false)
		if len(v.intGroups) > 0 {
			gcd := func(a, b int) int {
				for b != 0 {
					a, b = b, a%b
				}
				return a
			}
			f := v.intGroups[0]
			for _, x := range v.intGroups[1:] {
				f = gcd(f, x)
			}
			v.regular = f
			for i := 1; i <= len(v.intGroups); i++ {
				found := false
				for _, x := range v.intGroups {
					if x == i*f {
						found = true
					}
				}
				if !found {
					v.regular = 0
					break
				}
			}
		}
		v.fracGroups = groupPositions(p.fractional, true)
		v.minInt = count(p.integer, isDigit)
		v.scaling = v.minInt
		v.minFrac = count(p.fractional, isDigit)
		v.maxFrac = count(p.fractional, func(r rune) bool { return isDigit(r) || r == digit })
		if v.minInt == 0 && v.maxFrac == 0 {
			if p.hasExp {
				v.minFrac, v.maxFrac = 1, 1
			} else {
				v.minInt = 1
			}
		}
		if p.hasExp && v.minInt == 0 && runeIndex(p.integer, string(digit), 0) != -1 {
			v.minInt = 1
		}
		if v.minInt == 0 && v.minFrac == 0 {
			v.minFrac = 1
		}
		if p.hasExp {
			v.minExp = count(p.exponent, isDigit)
		}
		v.prefix, v.suffix, v.picture = string(p.prefix), string(p.suffix), string(p.sub)
		return v
	}
	var vars []picVars
	for _, sp := range subs {
		p := split(sp)
		if code := validate(p); code != "" {
			return nil, argErr(code, c, "Invalid picture string")
		}
		vars = append(vars, analyse(p))
	}
	if len(vars) == 1 {
		n := vars[0]
		n.prefix = props["minus-sign"] + n.prefix
		vars = append(vars, n)
	}
	pic := vars[0]
	if value < 0 {
		pic = vars[1]
	}
	adj := value
	if strings.Contains(pic.picture, props["percent"]) {
		adj = value * 100
	} else if strings.Contains(pic.picture, props["per-mille"]) {
		adj = value * 1000
	}
	mant := adj
	exp, hasExp := 0, false
	if pic.minExp != 0 {
		hasExp = true
		maxM := math.Pow(10, float64(pic.scaling))
		minM := math.Pow(10, float64(pic.scaling-1))
		for mant < minM {
			mant *= 10
			exp--
		}
		for mant > maxM {
			mant /= 10
			exp++
		}
	}
	rounded := roundHalfEven(mant, pic.maxFrac)
	makeString := func(v float64, dp int) string {
		s := strconv.FormatFloat(math.Abs(v), 'f', dp, 64)
		if zero != '0' {
			rs := []rune(s)
			for i, r := range rs {
				if r >= '0' && r <= '9' {
					rs[i] = family[r-'0']
				}
			}
			s = string(rs)
		}
		return s
	}
	sv := []rune(makeString(rounded, pic.maxFrac))
	if i := runeIndex(sv, ".", 0); i == -1 {
		sv = append(sv, dec)
	} else {
		sv[i] = dec
	}
	for len(sv) > 0 && sv[0] == zero {
		sv = sv[1:]
	}
	for len(sv) > 0 && sv[len(sv)-1] == zero {
		sv = sv[:len(sv)-1]
	}
	dp := runeIndex(sv, string(dec), 0)
	padLeft := pic.minInt - dp
	padRight := pic.minFrac - (len(sv) - dp - 1)
	if padLeft > 0 {
		sv = append([]rune(strings.Repeat(string(zero), padLeft)), sv...)
	}
	if padRight > 0 {
		sv = append(sv, []rune(strings.Repeat(string(zero), padRight))...)
	}
	insert := func(at int) {
		sv = append(sv[:at], append([]rune{grp}, sv[at:]...)...)
	}
	dp = runeIndex(sv, string(dec), 0)
	if pic.regular > 0 {
		groups := (dp - 1) / pic.regular
		for g := 1; g <= groups; g++ {
			insert(dp - g*pic.regular)
		}
	} else {
		for _, pos := range pic.intGroups {
			insert(dp - pos)
			dp++
		}
	}
	dp = runeIndex(sv, string(dec), 0)
	for _, pos := range pic.fracGroups {
		insert(pos + dp + 1)
	}
	dp = runeIndex(sv, string(dec), 0)
	if pic.minFrac == 0 && dp == len(sv)-1 {
		sv = sv[:len(sv)-1]
	}
	out := string(sv)
	if hasExp {
		se := makeString(float64(exp), 0)
		if pl := pic.minExp - len([]rune(se)); pl > 0 {
			se = strings.Repeat(string(zero), pl) + se
		}
		m := ""
		if exp < 0 {
			m = props["minus-sign"]
		}
		out += props["exponent-separator"] + m + se
	}
	return pic.prefix + out + pic.suffix, nil
}
