package scheduler

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"stepwise/internal/boundedfile"
)

// Calendar is a business calendar: the weekdays that are not business
// days (its weekend) and the dates that are not either (holidays,
// company days off).
type Calendar struct {
	Name     string
	weekend  [7]bool
	holidays map[date]string // the date's description, "" when none
}

// date is a day of the calendar, wherever it is.
type date struct {
	y int
	m time.Month
	d int
}

func dateOf(t time.Time) date {
	y, m, d := t.Date()
	return date{y, m, d}
}

// weekdaysOnly is the calendar a business-day offset uses when the
// schedule has none: Monday to Friday, no holidays.
var weekdaysOnly = &Calendar{weekend: [7]bool{time.Sunday: true, time.Saturday: true}}

// Business says whether t's date (in t's zone) is a business day.
func (c *Calendar) Business(t time.Time) bool {
	if c == nil {
		c = weekdaysOnly
	}
	if c.weekend[t.Weekday()] {
		return false
	}
	_, off := c.holidays[dateOf(t)]
	return !off
}

// maxShift bounds the days a move to a business day looks through (a
// calendar whose every day of a year is off has none to move to).
const maxShift = 366

// shift moves t to the nearest business day in direction dir (+1 or -1),
// at the same local time; t itself when it is one. ok is false when
// there is none within maxShift days.
func (c *Calendar) shift(t time.Time, dir int) (time.Time, bool) {
	for i := 0; i <= maxShift; i++ {
		d := addDays(t, dir*i)
		if c.Business(d) {
			return d, true
		}
	}
	return time.Time{}, false
}

// addDays is t n days later on the calendar, at the same local time.
func addDays(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, m, d+n, h, mi, s, t.Nanosecond(), t.Location())
}

var weekdayNames = map[string]time.Weekday{}

func init() {
	for d := time.Sunday; d <= time.Saturday; d++ {
		name := strings.ToLower(d.String())
		weekdayNames[name] = d
		weekdayNames[name[:3]] = d
	}
}

// ParseCalendar reads a calendar file: one non-business date a line
// (YYYY-MM-DD, then optionally its description), "#" starting a comment,
// and optionally a line "weekend" followed by the weekdays that are never
// business days (sat sun when the file has no such line; none with
// "weekend" alone).
func ParseCalendar(name string, r io.Reader) (*Calendar, error) {
	c := &Calendar{Name: name, weekend: weekdaysOnly.weekend, holidays: map[date]string{}}
	sc := bufio.NewScanner(r)
	seenWeekend := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if strings.EqualFold(fields[0], "weekend") {
			if seenWeekend {
				return nil, fmt.Errorf("line %d: a second weekend line", n)
			}
			seenWeekend = true
			c.weekend = [7]bool{}
			for _, f := range fields[1:] {
				for _, day := range strings.Split(f, ",") {
					if day == "" {
						continue
					}
					wd, ok := weekdayNames[strings.ToLower(day)]
					if !ok {
						return nil, fmt.Errorf("line %d: %q is not a weekday (sun, mon, tue, wed, thu, fri, sat)", n, day)
					}
					c.weekend[wd] = true
				}
			}
			if !slices.Contains(c.weekend[:], false) {
				return nil, fmt.Errorf("line %d: a weekend of every day leaves no business day", n)
			}
			continue
		}
		t, err := time.Parse("2006-01-02", fields[0])
		if err != nil {
			return nil, fmt.Errorf("line %d: %q is not a date (YYYY-MM-DD) nor a weekend line", n, fields[0])
		}
		c.holidays[dateOf(t)] = strings.Join(fields[1:], " ")
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

var calendarNamePattern = regexp.MustCompile(`^[0-9A-Za-z_.-]{1,64}$`)

// MaxCalendarFile bounds a calendar file: only a regular file is read, at
// most this much (a century of holidays is a few thousand lines).
const MaxCalendarFile = 1 << 20

// LoadCalendars reads the calendar files given as name → path.
func LoadCalendars(files map[string]string) (map[string]*Calendar, error) {
	out := make(map[string]*Calendar, len(files))
	for name, path := range files {
		if !calendarNamePattern.MatchString(name) {
			return nil, fmt.Errorf("calendar %q: a name is 1 to 64 of [0-9A-Za-z_.-]", name)
		}
		data, err := boundedfile.Read(context.Background(), path, MaxCalendarFile)
		if err != nil {
			return nil, fmt.Errorf("calendar %s: %w", name, err)
		}
		c, err := ParseCalendar(name, bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("calendar %s (%s): %w", name, path, err)
		}
		out[name] = c
	}
	return out, nil
}

// The rules for a slot that falls on a day that is not a business day.
const (
	RuleSkip     = "skip"     // it does not fire
	RuleNext     = "next"     // it fires on the next business day, at the same local time
	RulePrevious = "previous" // it fires on the business day before, at the same local time
)

// The group tags that attach a calendar: to every schedule of the group,
// or (overriding it) to one.
const (
	CalendarTag       = "stepwise:calendar"
	CalendarTagPrefix = "stepwise:calendar/"
	calendarNone      = "none"
)

// Attachment is a schedule's calendar and its rule.
type Attachment struct {
	Calendar *Calendar
	Rule     string
}

// String is the attachment as its tag value says it: calendar:rule.
func (a *Attachment) String() string {
	if a == nil {
		return ""
	}
	return a.Calendar.Name + ":" + a.Rule
}

// parseAttachment reads a calendar tag's value, <calendar>[:<rule>] (the
// rule skip by default); "none" (nil) detaches the group's calendar from
// one schedule.
func parseAttachment(key, value string, calendars map[string]*Calendar) (*Attachment, error) {
	if value == calendarNone && key != CalendarTag {
		return nil, nil
	}
	name, rule, _ := strings.Cut(value, ":")
	if rule == "" {
		rule = RuleSkip
	}
	if rule != RuleSkip && rule != RuleNext && rule != RulePrevious {
		return nil, validationError("The tag %s=%s names the rule %q: a calendar's rule is skip, next or previous.", key, value, rule)
	}
	c, ok := calendars[name]
	if !ok {
		known := make([]string, 0, len(calendars))
		for n := range calendars {
			known = append(known, n)
		}
		slices.Sort(known)
		list := "none (serve --calendar NAME=FILE gives one)"
		if len(known) > 0 {
			list = strings.Join(known, ", ")
		}
		return nil, validationError("The tag %s=%s names the calendar %q, which the server does not have; its calendars: %s.", key, value, name, list)
	}
	return &Attachment{Calendar: c, Rule: rule}, nil
}

// checkCalendarTags refuses calendar tags that name no calendar of the
// server or no rule.
func (s *Service) checkCalendarTags(tags []Tag) error {
	for _, t := range tags {
		if name, ok := strings.CutPrefix(t.Key, CalendarTagPrefix); ok && !namePattern.MatchString(name) {
			return validationError("The tag %s names no schedule: %s<schedule name> attaches a calendar to one schedule of the group.", t.Key, CalendarTagPrefix)
		}
		if t.Key == CalendarTag || strings.HasPrefix(t.Key, CalendarTagPrefix) {
			if _, err := parseAttachment(t.Key, t.Value, s.cfg.Calendars); err != nil {
				return err
			}
		}
	}
	return nil
}

// attachmentOf is the calendar a group's tags attach to one of its
// schedules: its own tag, else the group's; nil for none.
func (s *Service) attachmentOf(tags []Tag, schedule string) (*Attachment, error) {
	var group, own *Tag
	for i, t := range tags {
		switch t.Key {
		case CalendarTag:
			group = &tags[i]
		case CalendarTagPrefix + schedule:
			own = &tags[i]
		}
	}
	if own == nil {
		own = group
	}
	if own == nil {
		return nil, nil
	}
	a, err := parseAttachment(own.Key, own.Value, s.cfg.Calendars)
	if err != nil {
		return nil, fmt.Errorf("%w (a calendar removed since from the server's --calendar flags?)", err)
	}
	return a, nil
}

// calendarOf is the calendar a schedule fires by, from its group's tags
// (read once into cache).
func (s *Service) calendarOf(ctx context.Context, cache map[string][]Tag, group, schedule string) (*Attachment, error) {
	tags, ok := cache[group]
	if !ok {
		rows, err := s.exec.TagList(ctx, s.GroupArn(group))
		if err != nil {
			return nil, err
		}
		tags = make([]Tag, len(rows))
		for i, t := range rows {
			tags[i] = Tag{Key: t.Key, Value: t.Value}
		}
		cache[group] = tags
	}
	return s.attachmentOf(tags, schedule)
}

// logNotAWS logs what a schedule just written asks that EventBridge
// Scheduler would not do.
func (s *Service) logNotAWS(ctx context.Context, sch *Schedule) {
	att, err := s.calendarOf(ctx, map[string][]Tag{}, sch.GroupName, sch.Name)
	if err != nil {
		s.cfg.Logger.Warn("scheduler: schedule will not fire", "schedule_arn", sch.Arn, "error", err)
	}
	if sch.Target != nil {
		if _, _, _, why := TargetKind(sch.Target.Arn); why != "" {
			s.cfg.Logger.Warn("scheduler: schedule will not fire: "+why, "schedule_arn", sch.Arn)
		}
	}
	for _, w := range NotAWS(sch, att) {
		s.cfg.Logger.Info("scheduler: not as on AWS: "+w.String(), "schedule_arn", sch.Arn)
	}
}

// fireAt is when a slot fires under its calendar: the slot itself on a
// business day (in the schedule's zone loc); otherwise nothing (skip) or
// the same local time on the next or previous business day. ok is false
// when the slot does not fire.
func (a *Attachment) fireAt(slot time.Time, loc *time.Location) (at time.Time, ok bool) {
	if a == nil {
		return slot, true
	}
	local := slot.In(loc)
	if a.Calendar.Business(local) {
		return slot, true
	}
	switch a.Rule {
	case RuleNext:
		return a.Calendar.shift(local, +1)
	case RulePrevious:
		return a.Calendar.shift(local, -1)
	}
	return time.Time{}, false
}
