package jsonata

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Port of jsonata.js $formatInteger (XPath F&O 3.1 section 4.6.1), English only.

var (
	fewWords     = []string{"Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Eleven", "Twelve", "Thirteen", "Fourteen", "Fifteen", "Sixteen", "Seventeen", "Eighteen", "Nineteen"}
	ordinalWords = []string{"Zeroth", "First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth", "Ninth", "Tenth", "Eleventh", "Twelfth", "Thirteenth", "Fourteenth", "Fifteenth", "Sixteenth", "Seventeenth", "Eighteenth", "Nineteenth"}
	decadeWords  = []string{"Twenty", "Thirty", "Forty", "Fifty", "Sixty", "Seventy", "Eighty", "Ninety", "Hundred"}
	magWords     = []string{"Thousand", "Million", "Billion", "Trillion"}
)

func numberToWords(num float64, prev, ord bool) string {
	words := ""
	switch {
	case num <= 19:
		if prev {
			words = " and "
		}
		if ord {
			words += ordinalWords[int(num)]
		} else {
			words += fewWords[int(num)]
		}
	case num < 100:
		tens, rem := int(num)/10, int(num)%10
		if prev {
			words = " and "
		}
		words += decadeWords[tens-2]
		if rem > 0 {
			words += "-" + numberToWords(float64(rem), false, ord)
		} else if ord {
			words = words[:len(words)-1] + "ieth"
		}
	case num < 1000:
		h, rem := int(num)/100, int(num)%100
		if prev {
			words = ", "
		}
		words += fewWords[h] + " Hundred"
		if rem > 0 {
			words += numberToWords(float64(rem), true, ord)
		} else if ord {
			words += "th"
		}
	default:
		mag := int(math.Floor(math.Log10(num) / 3))
		if mag > len(magWords) {
			mag = len(magWords)
		}
		factor := math.Pow(10, float64(mag*3))
		mant := math.Floor(num / factor)
		rem := num - mant*factor
		if prev {
			words = ", "
		}
		words += numberToWords(mant, false, false) + " " + magWords[mag-1]
		if rem > 0 {
			words += numberToWords(rem, true, ord)
		} else if ord {
			words += "th"
		}
	}
	return words
}

func toRoman(v int) string {
	vals := []int{1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1}
	syms := []string{"M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I"}
	var sb strings.Builder
	for i, x := range vals {
		for v >= x {
			sb.WriteString(syms[i])
			v -= x
		}
	}
	return sb.String()
}

// toLetters is jsonata.js's decimalToLetters, in doubles as there.
func toLetters(v float64, a rune) string {
	var out []rune
	for v > 0 {
		out = append(out, rune(math.Mod(v-1, 26))+a)
		v = math.Floor((v - 1) / 26)
	}
	slices.Reverse(out)
	return string(out)
}

func ordinalSuffix(s string) string {
	n := len(s)
	last := s[n-1]
	if n >= 2 && s[n-2] == '1' {
		return "th"
	}
	switch last {
	case '1':
		return "st"
	case '2':
		return "nd"
	case '3':
		return "rd"
	}
	return "th"
}

func digitZero(r rune) (rune, bool) {
	if !unicode.IsDigit(r) {
		return 0, false
	}
	z := r
	for z > 0 && unicode.IsDigit(z-1) && (z-r) > -9 {
		z--
	}
	return z, true
}

func formatInteger(c *callCtx, value float64, picture string) (any, error) {
	primary, modifier := picture, ""
	if i := strings.LastIndex(picture, ";"); i >= 0 {
		primary, modifier = picture[:i], picture[i+1:]
	}
	ordinal := strings.HasPrefix(modifier, "o")
	value = math.Floor(value) // jsonata.js floors before taking the sign
	neg := value < 0
	value = math.Abs(value)
	sign := ""
	if neg {
		sign = "-"
	}
	if (primary == "w" || primary == "W" || primary == "Ww") && (math.IsNaN(value) || math.IsInf(value, 0)) {
		// jsonata.js recurses without end on these and overflows its stack.
		return nil, argErr("RangeError", c, "Maximum call stack size exceeded")
	}
	if (primary == "I" || primary == "i") && value/1000 > maxStringLength {
		return nil, argErr("RangeError", c, "Invalid string length")
	}
	switch primary {
	case "I":
		return sign + toRoman(int(value)), nil
	case "i":
		return sign + strings.ToLower(toRoman(int(value))), nil
	case "A":
		return sign + toLetters(value, 'A'), nil
	case "a":
		return sign + toLetters(value, 'a'), nil
	case "w", "W", "Ww":
		w := numberToWords(value, false, ordinal)
		switch primary {
		case "w":
			w = strings.ToLower(w)
		case "W":
			w = strings.ToUpper(w)
		}
		return sign + w, nil
	}
	// decimal digit pattern
	rs := []rune(primary)
	zero := rune(-1)
	mandatory := 0
	type sep struct {
		pos int
		ch  rune
	}
	var seps []sep
	digitsRight := 0
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		if z, ok := digitZero(r); ok {
			if zero != -1 && z != zero {
				return nil, argErr("D3131", c, "In a decimal digit pattern, all digits must be from the same decimal group")
			}
			zero = z
			mandatory++
			digitsRight++
		} else if r == '#' {
			digitsRight++
		} else if unicode.IsLetter(r) {
			return nil, argErr("D3130", c, "Formatting or parsing an integer as a sequence starting with "+string(r)+" is not supported by this implementation")
		} else {
			seps = append(seps, sep{digitsRight, r})
		}
	}
	if zero == -1 {
		if len(rs) > 0 && !strings.ContainsRune(primary, '#') {
			return nil, argErr("D3130", c, "Formatting or parsing an integer as a sequence starting with "+string(rs[0])+" is not supported by this implementation")
		}
		zero = '0'
	}
	// As value.toString() in jsonata.js: 1e+21 and up keep the exponent.
	digits := []rune(jsNumber(value))
	for i, d := range digits {
		digits[i] = zero + (d - '0')
	}
	for len(digits) < mandatory {
		digits = append([]rune{zero}, digits...)
	}
	if len(seps) > 0 {
		regular := true
		for i, s := range seps {
			if s.ch != seps[0].ch || s.pos != seps[0].pos*(i+1) {
				regular = false
			}
		}
		if regular && seps[0].pos > 0 {
			step := seps[0].pos
			var out []rune
			for i, d := range digits {
				fromRight := len(digits) - i
				if i > 0 && fromRight%step == 0 {
					out = append(out, seps[0].ch)
				}
				out = append(out, d)
			}
			digits = out
		} else {
			// insert from the leftmost separator position (largest) to keep offsets valid
			for i := len(seps) - 1; i >= 0; i-- {
				s := seps[i]
				at := len(digits) - s.pos
				if at > 0 && at <= len(digits) {
					digits = append(digits[:at], append([]rune{s.ch}, digits[at:]...)...)
				}
			}
		}
	}
	out := string(digits)
	if ordinal {
		out += ordinalSuffix(strings.TrimSuffix(jsNumber(value), ".0"))
	}
	return sign + out, nil
}

var wordValues = func() map[string]float64 {
	m := map[string]float64{}
	for i, w := range fewWords {
		m[strings.ToLower(w)] = float64(i)
	}
	for i, w := range ordinalWords {
		m[strings.ToLower(w)] = float64(i)
	}
	for i, w := range decadeWords {
		lw := strings.ToLower(w)
		m[lw] = float64((i + 2) * 10)
		m[lw[:len(lw)-1]+"ieth"] = m[lw]
	}
	m["hundredth"] = 100
	for i, w := range magWords {
		lw := strings.ToLower(w)
		m[lw] = math.Pow(10, float64((i+1)*3))
		m[lw+"th"] = m[lw]
	}
	return m
}()

var wordSplitRe = regexp.MustCompile(`,\s|\sand\s|[\s\-]`)

func wordsToNumber(text string) float64 {
	segs := []float64{0}
	for _, part := range wordSplitRe.Split(strings.ToLower(text), -1) {
		v := wordValues[part]
		top := segs[len(segs)-1]
		segs = segs[:len(segs)-1]
		if v < 100 {
			if top >= 1000 {
				segs = append(segs, top)
				top = 0
			}
			segs = append(segs, top+v)
		} else {
			segs = append(segs, top*v)
		}
	}
	sum := 0.0
	for _, s := range segs {
		sum += s
	}
	return sum
}

func fromRoman(s string) float64 {
	vals := map[byte]int{'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}
	s = strings.ToUpper(s)
	total := 0
	for i := 0; i < len(s); i++ {
		v := vals[s[i]]
		if i+1 < len(s) && vals[s[i+1]] > v {
			total -= v
		} else {
			total += v
		}
	}
	return float64(total)
}

func fromLetters(s string, a rune) float64 {
	n := 0
	for _, r := range s {
		n = n*26 + int(r-a) + 1
	}
	return float64(n)
}

func parseInteger(c *callCtx, s, picture string) (any, error) {
	primary, modifier := picture, ""
	if i := strings.LastIndex(picture, ";"); i >= 0 {
		primary, modifier = picture[:i], picture[i+1:]
	}
	switch primary {
	case "I", "i":
		return fromRoman(s), nil
	case "A":
		return fromLetters(s, 'A'), nil
	case "a":
		return fromLetters(s, 'a'), nil
	case "w", "W", "Ww":
		return wordsToNumber(s), nil
	}
	zero := rune(-1)
	for _, r := range primary {
		if z, ok := digitZero(r); ok {
			zero = z
		} else if r != '#' && unicode.IsLetter(r) {
			zero = -2
			break
		}
	}
	if zero < 0 {
		return nil, argErr("D3130", c, "Formatting or parsing an integer as a sequence starting with "+primary+" is not supported by this implementation")
	}
	var digits []rune
	for _, r := range s {
		if r >= zero && r < zero+10 {
			digits = append(digits, '0'+(r-zero))
		}
	}
	_ = modifier
	if len(digits) == 0 {
		return nil, nil
	}
	v := 0.0
	for _, d := range digits {
		v = v*10 + float64(d-'0')
	}
	return v, nil
}
