package jp1

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

var (
	ruleRe  = regexp.MustCompile(`^(\d+),(.*)$`)
	stRe    = regexp.MustCompile(`^(\+?)(\d{1,2}):(\d{2})$`)
	cyRe    = regexp.MustCompile(`^\(\s*(\d+)\s*,\s*([ymwd])\s*\)$`)
	dateRe  = regexp.MustCompile(`^(?:(?:(\d{4})/)?(\d{1,2})/)?([+*@]?)(\d{1,2}|b(?:-\d+)?)$`)
	wdayRe  = regexp.MustCompile(`^(?:(?:(\d{4})/)?(\d{1,2})/)?\+?(su|mo|tu|we|th|fr|sa)(?::(\d|b))?$`)
	weekday = map[string]string{"su": "SUN", "mo": "MON", "tu": "TUE", "we": "WED", "th": "THU", "fr": "FRI", "sa": "SAT"}
)

// rules groups a root net's schedule parameters by their rule number.
func rules(u *Unit) map[int]map[string]string {
	out := map[int]map[string]string{}
	for _, p := range u.Params {
		switch p.Key {
		case "sd", "st", "cy", "sh", "shd":
		default:
			continue
		}
		n, v := 1, Unquote(p.Value)
		if m := ruleRe.FindStringSubmatch(v); m != nil {
			n, _ = strconv.Atoi(m[1])
			v = m[2]
		}
		if out[n] == nil {
			out[n] = map[string]string{}
		}
		out[n][p.Key] = strings.TrimSpace(v)
	}
	return out
}

// schedules4 turns a root net's schedule rules into schedules.
func (c *conv) schedules4(n *net) error {
	rs := rules(n.unit)
	nums := make([]int, 0, len(rs))
	for k := range rs {
		nums = append(nums, k)
	}
	sort.Ints(nums)
	for _, num := range nums {
		r := rs[num]
		all := fmt.Sprintf("sd=%s st=%s cy=%s", r["sd"], r["st"], r["cy"])
		if r["sd"] == "ud" || r["sd"] == "" && r["cy"] == "" {
			continue
		}
		expr, why := cronOf(r)
		if why != "" {
			c.note(n.path, fmt.Sprintf("schedule rule %d", num), all, why)
			continue
		}
		s := schedule{name: fmt.Sprintf("%s-%d", n.name, num), net: n.logical, expr: expr}
		s.logical = c.uniqueLogical("Schedule", n.name+" "+strconv.Itoa(num))
		switch sh := r["sh"]; sh {
		case "", "no":
		case "be", "af", "ca":
			cal := c.calendarOf(n)
			if cal == "" {
				c.note(n.path, "sh", sh, "no calendar (op=/cl= of a job group, or jc=) to shift by")
				break
			}
			s.calendarTag = cal + ":" + map[string]string{"be": "previous", "af": "next", "ca": "skip"}[sh]
		default:
			c.note(n.path, "sh", sh, "unknown shift: be, af, ca or no")
		}
		if shd := r["shd"]; shd != "" {
			c.note(n.path, "shd", shd, "a shifted slot moves to the nearest business day, however far")
		}
		c.schedules = append(c.schedules, s)
	}
	return nil
}

// cronOf is the schedule expression of one rule, or why there is none.
func cronOf(r map[string]string) (string, string) {
	hh, mm := 0, 0
	if st := r["st"]; st != "" {
		m := stRe.FindStringSubmatch(st)
		if m == nil {
			return "", "start time is not hh:mm"
		}
		if m[1] == "+" {
			return "", "a start time relative to the registration is not a schedule"
		}
		hh, _ = strconv.Atoi(m[2])
		mm, _ = strconv.Atoi(m[3])
		if mm > 59 || hh > 47 {
			return "", "start time out of range"
		}
	}
	every, unit := 0, ""
	if cy := r["cy"]; cy != "" {
		m := cyRe.FindStringSubmatch(cy)
		if m == nil {
			return "", "cycle is not (n,y|m|w|d)"
		}
		every, _ = strconv.Atoi(m[1])
		unit = m[2]
		if every != 1 {
			return "", "a cycle of every " + m[1] + " " + map[string]string{"y": "years", "m": "months", "w": "weeks", "d": "days"}[unit] + " is not a cron expression"
		}
	}
	if hh >= 24 {
		if unit != "d" {
			return "", "a start time past 24:00 is carried over on daily schedules only"
		}
		hh -= 24
	}
	sd := r["sd"]
	if sd == "" || sd == "en" {
		if unit == "d" {
			return fmt.Sprintf("cron(%d %d * * ? *)", mm, hh), ""
		}
		return "", "a start on the registration day is carried over with a daily cycle only"
	}
	if m := wdayRe.FindStringSubmatch(sd); m != nil {
		dow := weekday[m[3]]
		switch {
		case m[4] == "" && (unit == "w" || unit == "d"):
			return fmt.Sprintf("cron(%d %d ? * %s *)", mm, hh, dow), ""
		case m[4] == "b" && unit == "m":
			return fmt.Sprintf("cron(%d %d ? * %sL *)", mm, hh, dow), ""
		case m[4] != "" && m[4] != "b" && unit == "m":
			return fmt.Sprintf("cron(%d %d ? * %s#%s *)", mm, hh, dow, m[4]), ""
		}
		return "", "this weekday rule with this cycle is not carried over"
	}
	m := dateRe.FindStringSubmatch(sd)
	if m == nil {
		return "", "start date not understood"
	}
	if m[3] != "" {
		return "", "a start date counted from the base day (+, * open days, @ closed days) is not carried over"
	}
	if strings.HasPrefix(m[4], "b") {
		if m[4] == "b" && unit == "m" {
			return fmt.Sprintf("cron(%d %d L * ? *)", mm, hh), ""
		}
		return "", "a day counted from the end of the month is carried over as the last day, monthly, only"
	}
	day, _ := strconv.Atoi(m[4])
	switch unit {
	case "d":
		return fmt.Sprintf("cron(%d %d * * ? *)", mm, hh), ""
	case "m":
		return fmt.Sprintf("cron(%d %d %d * ? *)", mm, hh, day), ""
	case "y":
		if m[2] == "" {
			return "", "a yearly cycle needs the month"
		}
		return fmt.Sprintf("cron(%d %d %d %s ? *)", mm, hh, day, m[2]), ""
	case "w":
		if m[1] == "" {
			return "", "a weekly cycle needs a full date or a weekday"
		}
		t := date(m[1], m[2], day)
		return fmt.Sprintf("cron(%d %d ? * %s *)", mm, hh, strings.ToUpper(t.Weekday().String()[:3])), ""
	}
	if m[1] == "" {
		return "", "a single start date needs its year"
	}
	t := date(m[1], m[2], day)
	return fmt.Sprintf("at(%s)", time.Date(t.Year(), t.Month(), t.Day(), hh, mm, 0, 0, time.UTC).Format("2006-01-02T15:04:05")), ""
}

func date(y, m string, d int) time.Time {
	yy, _ := strconv.Atoi(y)
	mo, _ := strconv.Atoi(m)
	return time.Date(yy, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
}

// calendarOf names the calendar of a root net (jc=, else the nearest job
// group above it with op= or cl=), writing its file the first time.
func (c *conv) calendarOf(n *net) string {
	var g *Unit
	path := ""
	if jc := n.unit.Get("jc"); jc != "" {
		g, path = c.groups[jc], jc
		if g == nil {
			c.note(n.path, "jc", jc, "no such job group in the file")
			return ""
		}
	} else {
		p := n.path[:strings.LastIndex(n.path, "/")]
		for i := len(n.groups) - 1; i >= 0; i-- {
			if len(n.groups[i].All("op"))+len(n.groups[i].All("cl")) > 0 {
				g = n.groups[i]
				break
			}
		}
		for g != nil && c.groups[p] != g && p != "" {
			p = p[:max(strings.LastIndex(p, "/"), 0)]
		}
		path = p
	}
	if g == nil {
		return ""
	}
	name := strings.ToLower(sanitize(lastSegment(g.Name)))
	if c.calendars[path] != "" {
		return c.calendars[path]
	}
	c.calendars[path] = name
	c.app.Files["calendars/"+name+".txt"] = c.calendarFile(path, g)
	return name
}

var dayNames = map[string]string{"su": "sun", "mo": "mon", "tu": "tue", "we": "wed", "th": "thu", "fr": "fri", "sa": "sat"}

func (c *conv) calendarFile(path string, g *Unit) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# The calendar of the JP1/AJS3 job group %s: its closed days (cl=).\n", path)
	var weekend, dates []string
	for _, v := range g.All("cl") {
		if d, ok := dayNames[v]; ok {
			weekend = append(weekend, d)
			continue
		}
		t, err := time.Parse("2006/1/2", v)
		if err != nil {
			c.note(path, "cl", v, "not yyyy/mm/dd or a weekday")
			continue
		}
		dates = append(dates, t.Format("2006-01-02"))
	}
	for _, v := range g.All("op") {
		if d, ok := dayNames[v]; ok {
			weekend = slices.DeleteFunc(weekend, func(w string) bool { return w == d })
			continue
		}
		c.note(path, "op", v, "an open date is not carried over: a calendar file lists closed days")
	}
	fmt.Fprintf(&b, "weekend %s\n", strings.Join(weekend, " "))
	sort.Strings(dates)
	for _, d := range slices.Compact(dates) {
		b.WriteString(d + "\n")
	}
	return []byte(b.String())
}
