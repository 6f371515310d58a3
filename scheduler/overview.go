package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"stepwise/store"
)

// Overview is a schedule as the console shows it: its settings, the
// last slot it fired and the next ones.
type Overview struct {
	Arn, Group, Name, State   string
	Expression, Timezone      string
	Target                    string
	LastFired                 *time.Time
	Next                      []time.Time // none when DISABLED or over; as its calendar moves them
	Created, LastModification time.Time
	// Held is when the next run that is held (stepwise hold-next) would
	// have fired, nil for none; Skipped are the runs holds skipped, the
	// latest last.
	Held    *time.Time
	Skipped []time.Time
	// Calendar is the business calendar the schedule fires by and its
	// rule ("jp:next"; "" for none), from its group's tags.
	Calendar string
	// NotAWS says what the schedule asks that EventBridge Scheduler would
	// not do (NotAWS), and why it does not fire if it does not.
	NotAWS []Difference
}

// A Difference is what a schedule asks that EventBridge Scheduler would
// not do, or why it does not fire: Kind names it for a page to word in
// its own language, String words it in English (the logs).
type Difference struct {
	Kind           string // DiffCalendar, DiffNamePlaceholders, DiffInputPlaceholders or DiffNotFired
	Calendar, Rule string // of DiffCalendar
	Detail         string // of DiffNotFired: the error
}

// The kinds of Difference.
const (
	DiffCalendar          = "calendar"
	DiffNamePlaceholders  = "name-placeholders"
	DiffInputPlaceholders = "input-placeholders"
	DiffNotFired          = "not-fired"
)

func (d Difference) String() string {
	switch d.Kind {
	case DiffCalendar:
		does := map[string]string{RuleSkip: "skips a slot that falls on a day off",
			RuleNext:     "moves a slot that falls on a day off to the next business day",
			RulePrevious: "moves a slot that falls on a day off to the business day before"}[d.Rule]
		return fmt.Sprintf("The calendar %s (rule %s, from the group's tags) %s: EventBridge Scheduler fires every slot of the expression.",
			d.Calendar, d.Rule, does)
	case DiffNamePlaceholders:
		return "The execution name uses Stepwise's placeholders (<stepwise.…>): EventBridge Scheduler passes the Name as written, and StartExecution refuses its < and >."
	case DiffInputPlaceholders:
		return "The input uses Stepwise's placeholders (<stepwise.…>): EventBridge Scheduler substitutes only its own (<aws.scheduler.…>) and leaves these as written."
	case DiffNotFired:
		return "Not fired: " + d.Detail
	}
	return d.Kind
}

// Overview lists every schedule with its next slots (at most next of
// them, after now and after the last one fired).
func (s *Service) Overview(ctx context.Context, next int) ([]Overview, error) {
	var out []Overview
	p := &store.ScheduleListParams{Limit: 500}
	now := s.now()
	groupTags := map[string][]Tag{}
	for {
		rows, err := s.exec.ScheduleList(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			sc, err := s.decode(row)
			if err != nil {
				return nil, err
			}
			o := Overview{Arn: sc.Arn, Group: row.GroupName, Name: row.Name, State: row.State,
				Expression: sc.ScheduleExpression, Timezone: sc.ScheduleExpressionTimezone, LastFired: row.LastFired,
				Created: row.CreatedAt, LastModification: row.UpdatedAt}
			if o.Timezone == "" {
				o.Timezone = "UTC"
			}
			if sc.Target != nil {
				o.Target = sc.Target.Arn
				if _, _, _, why := TargetKind(sc.Target.Arn); why != "" {
					o.NotAWS = append(o.NotAWS, Difference{Kind: DiffNotFired, Detail: why})
				}
			}
			att, err := s.calendarOf(ctx, groupTags, row.GroupName, row.Name)
			if err != nil {
				o.NotAWS = append(o.NotAWS, Difference{Kind: DiffNotFired, Detail: err.Error()})
			}
			o.Calendar = att.String()
			held, isHeld, skipped, herr := s.holds(ctx, sc.Arn)
			if herr != nil {
				return nil, herr
			}
			if isHeld && held.After(cursor(row)) {
				at, _ := att.fireAt(held, sc.location())
				o.Held = &at
			}
			o.Skipped = skipped
			o.NotAWS = append(o.NotAWS, NotAWS(sc, att)...)
			if row.State == "ENABLED" && err == nil {
				o.Next = nextFirings(sc, row, att, now, next)
			}
			out = append(out, o)
		}
		if len(rows) < p.Limit {
			return out, nil
		}
		last := rows[len(rows)-1]
		p.AfterGroup, p.AfterName = last.GroupName, last.Name
	}
}

// nextFirings are a schedule's next n firings after now (and after its
// last slot fired), its calendar's moves applied.
func nextFirings(sc *Schedule, row *store.Schedule, att *Attachment, now time.Time, n int) []time.Time {
	e, err := sc.Expr(row.CreatedAt)
	if err != nil {
		return nil
	}
	loc := sc.location()
	// The slots after now, and under the rule next those of the days off
	// just before today, moved to today or later.
	from := now
	if att != nil && att.Rule == RuleNext {
		day := now.In(loc)
		day = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc)
		for i := 0; i < maxShift && !att.Calendar.Business(addDays(day, -1)); i++ {
			day = addDays(day, -1)
		}
		from = day.Add(-time.Nanosecond)
	}
	after := cursor(row)
	if from.After(after) {
		after = from
	}
	var out []time.Time
	var last time.Time
	for i := 0; len(out) < n && i < 10000; i++ {
		slot, ok := e.Next(after)
		if !ok {
			break
		}
		after = slot
		at, fires := att.fireAt(slot, loc)
		if !fires || !at.After(now) || (!last.IsZero() && !at.After(last)) {
			continue
		}
		out = append(out, at)
		last = at
	}
	return out
}

// NotAWS says, one sentence each, what a schedule asks of Stepwise that
// EventBridge Scheduler would not do: fire by a business calendar (att),
// and substitute Stepwise's placeholders in the execution name or input.
func NotAWS(sc *Schedule, att *Attachment) []Difference {
	var out []Difference
	if att != nil {
		out = append(out, Difference{Kind: DiffCalendar, Calendar: att.Calendar.Name, Rule: att.Rule})
	}
	if sc.Target == nil || sc.Target.Input == nil {
		return out
	}
	name, input := "", *sc.Target.Input
	if sc.Target.Arn == UniversalStartExecution {
		var req struct{ Name, Input any }
		if json.Unmarshal([]byte(input), &req) == nil {
			name, _ = req.Name.(string)
			input, _ = req.Input.(string)
		}
	}
	if placeholderPattern.MatchString(name) {
		out = append(out, Difference{Kind: DiffNamePlaceholders})
	}
	if placeholderPattern.MatchString(input) {
		out = append(out, Difference{Kind: DiffInputPlaceholders})
	}
	return out
}

// Planned is a firing of a schedule in a window: when it fires (its
// calendar applied) and the execution it starts there.
type Planned struct {
	Group, Name string
	At          time.Time
	// StateMachine and Execution are the state machine the firing starts
	// and the name it gives the execution ("" when the target is not
	// StartExecution or its request cannot be read).
	StateMachine, Execution string
}

// plannedPerSchedule bounds the firings Planned lists of one schedule.
const plannedPerSchedule = 200

// Planned lists the enabled schedules' firings at or after from and
// before to, calendars applied (a slot moved into the window by its
// calendar is in it, one moved out is not), in time order, each with the
// execution it starts (ExecutionName). Slots before the schedule was
// created are not listed.
func (s *Service) Planned(ctx context.Context, from, to time.Time) ([]Planned, error) {
	var out []Planned
	p := &store.ScheduleListParams{Limit: 500}
	groupTags := map[string][]Tag{}
	for {
		rows, err := s.exec.ScheduleList(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			if row.State != "ENABLED" {
				continue
			}
			sc, err := s.decode(row)
			if err != nil {
				return nil, err
			}
			att, err := s.calendarOf(ctx, groupTags, row.GroupName, row.Name)
			if err != nil {
				continue // not fired: the schedules' page says why
			}
			out = append(out, plannedOf(sc, row, att, from, to)...)
		}
		if len(rows) < p.Limit {
			break
		}
		last := rows[len(rows)-1]
		p.AfterGroup, p.AfterName = last.GroupName, last.Name
	}
	slices.SortStableFunc(out, func(a, b Planned) int { return a.At.Compare(b.At) })
	return out, nil
}

// plannedOf is a schedule's firings in [from, to).
func plannedOf(sc *Schedule, row *store.Schedule, att *Attachment, from, to time.Time) []Planned {
	e, err := sc.Expr(row.CreatedAt)
	if err != nil {
		return nil
	}
	var cal *Calendar
	if att != nil {
		cal = att.Calendar
	}
	loc := sc.location()
	// A calendar moves a slot by up to maxShift days either way.
	after, until := from.Add(-time.Nanosecond), to
	if att != nil {
		after, until = addDays(from, -maxShift).Add(-time.Nanosecond), addDays(to, maxShift)
	}
	if created := row.CreatedAt.Truncate(time.Minute).Add(-time.Nanosecond); created.After(after) {
		after = created
	}
	var out []Planned
	var last time.Time
	for i := 0; len(out) < plannedPerSchedule && i < 10000; i++ {
		slot, ok := e.Next(after)
		if !ok || !slot.Before(until) {
			break
		}
		after = slot
		at, fires := att.fireAt(slot, loc)
		if !fires || at.Before(from) || !at.Before(to) || (!last.IsZero() && !at.After(last)) {
			continue
		}
		last = at
		pl := Planned{Group: row.GroupName, Name: row.Name, At: at}
		if sc.Target != nil {
			if TargetKindOf(sc) == TargetStateMachine && (sc.Target.Arn != UniversalStartExecution || sc.Target.Input != nil) {
				if req, err := StartRequest(sc, at, 1, cal); err == nil && req.Name != nil {
					pl.StateMachine, pl.Execution = req.StateMachineArn, *req.Name
				}
			}
		}
		out = append(out, pl)
	}
	return out
}
