package console

import (
	"fmt"
	"html/template"
	"slices"
	"strings"
	"time"
)

// An execution's timeline is drawn on the server, an SVG in its page
// (no script, no inline style: the classes are style.css's). Each entry
// of a state is a row, a Parallel's branches' and a Map's iterations'
// states in rows of their own under it, indented; each row is its bars
// on a time axis from the execution's start to its end (or now):
//
//   - a try that failed and was retried or redriven: a bar of its own
//     (seg-retry);
//   - a task's time scheduled before it started (seg-queued), then
//     running (seg-run);
//   - a Wait state: shaded (seg-wait);
//   - the critical path, the chain of entries that determined the end
//     (critical): from the entry that ended last, back through the entry
//     of the same branch or iteration that ended last before it was
//     entered; a Parallel or Map on it puts on it its branch or
//     iteration that ended last.

// timelineRows bounds the rows drawn.
const timelineRows = 500

// Timeline is an execution's timeline, for its page.
type Timeline struct {
	SVG       template.HTML
	Rows      int
	Truncated bool
	Critical  []string // the critical path's states, in order
}

type timelineSeg struct {
	from, to time.Time
	class    string
	title    string
}

type timelineRow struct {
	o     *occurrence
	label string
	depth int
	segs  []timelineSeg
}

// timelineOf draws an analysis' timeline from start to end; late names
// the states running late.
func timelineOf(a *analysis, start, end time.Time, late map[string]bool, lang string) *Timeline {
	var all []*occurrence
	for _, list := range a.occurrences {
		all = append(all, list...)
	}
	if len(all) == 0 {
		return nil
	}
	// order is each entry's place in the history: of entries stamped in
	// the same millisecond, the later.
	order := map[*occurrence]int{}
	for i, ev := range a.events {
		if o := a.byID[ev.ID]; o != nil && strings.HasSuffix(ev.Type, "StateEntered") {
			order[o] = i
		}
	}
	// Depth-first: each entry, then the entries inside it, by entry time.
	inside := map[*occurrence][]*occurrence{}
	var top []*occurrence
	for _, o := range all {
		if o.container != nil {
			inside[o.container] = append(inside[o.container], o)
		} else {
			top = append(top, o)
		}
	}
	byEntry := func(list []*occurrence) {
		slices.SortStableFunc(list, func(x, y *occurrence) int {
			if c := x.iteration - y.iteration; x.container != nil && c != 0 && x.container == y.container {
				return c
			}
			if c := x.entered.Compare(y.entered); c != 0 {
				return c
			}
			return order[x] - order[y]
		})
	}
	// Task times: when each try's task was scheduled and started.
	type taskTimes struct{ scheduled, started, failed []time.Time }
	tasks := map[*occurrence]*taskTimes{}
	for _, ev := range a.events {
		o := a.byID[ev.ID]
		if o == nil {
			continue
		}
		tt := tasks[o]
		if tt == nil {
			tt = &taskTimes{}
			tasks[o] = tt
		}
		switch {
		case rescheduledEvents[ev.Type]:
			tt.scheduled = append(tt.scheduled, ev.Timestamp)
		case ev.Type == "TaskStarted" || ev.Type == "ActivityStarted" || ev.Type == "LambdaFunctionStarted":
			tt.started = append(tt.started, ev.Timestamp)
		case failureEvents[ev.Type]:
			tt.failed = append(tt.failed, ev.Timestamp)
		}
	}
	endOf := func(o *occurrence) time.Time {
		if o.exited.IsZero() {
			return end
		}
		return o.exited
	}
	// Each entry's predecessor: the entry whose last event its
	// StateEntered follows (not the Parallel or Map it starts in).
	pred := map[*occurrence]*occurrence{}
	for _, ev := range a.events {
		if !strings.HasSuffix(ev.Type, "StateEntered") {
			continue
		}
		if o, p := a.byID[ev.ID], a.byID[ev.Prev]; o != nil && p != nil && p != o && p != o.container {
			pred[o] = p
		}
	}
	critical := criticalPath(top, inside, pred, endOf, order)
	var rows []timelineRow
	truncated := false
	var walk func(list []*occurrence, depth int)
	walk = func(list []*occurrence, depth int) {
		byEntry(list)
		for _, o := range list {
			if len(rows) >= timelineRows {
				truncated = true
				return
			}
			label := o.state
			if o.iteration >= 0 && o.container != nil && o.container.kind == "Map" {
				label = fmt.Sprintf("%s [%d]", o.state, o.iteration)
			}
			r := timelineRow{o: o, label: label, depth: depth}
			tt := tasks[o]
			if tt == nil {
				tt = &taskTimes{}
			}
			// queued splits a task's try at the time its task started.
			queued := func(seg timelineSeg, try int) timelineSeg {
				if o.kind == "Task" && try < len(tt.started) {
					if st := tt.started[try]; st.After(seg.from) && st.Before(seg.to) {
						r.segs = append(r.segs, timelineSeg{from: seg.from, to: st, class: "seg-queued", title: o.state + " · " + translate(lang, "tlQueued")})
						seg.from = st
					}
				}
				return seg
			}
			// Earlier tries, each a bar of its own, to their failure
			// (the back-off after it is left blank).
			for i, tr := range o.tries {
				to := o.tryStarted
				if i+1 < len(o.tries) {
					to = o.tries[i+1].started
				}
				if i < len(tt.failed) && tt.failed[i].After(tr.started) && tt.failed[i].Before(to) {
					to = tt.failed[i]
				}
				r.segs = append(r.segs, queued(timelineSeg{from: tr.started, to: to, class: "seg-retry",
					title: fmt.Sprintf("%s · %s %d · %s", o.state, translate(lang, "retrySegment"), i+1, strings.TrimSpace(tr.err))}, i))
			}
			last := timelineSeg{from: o.tryStarted, to: endOf(o), class: "seg-run seg-" + o.status}
			switch o.kind {
			case "Wait":
				last.class = "seg-wait"
			case "Parallel", "Map":
				last.class = "seg-container seg-" + o.status
			}
			last = queued(last, len(o.tries))
			last.title = fmt.Sprintf("%s · %s · %s", o.state, statusName(lang, o.status), formatDuration(lang, endOf(o).Sub(o.entered)))
			if late[o.state] && o.open() {
				last.class += " seg-late"
			}
			r.segs = append(r.segs, last)
			rows = append(rows, r)
			if kids := inside[o]; len(kids) > 0 {
				walk(kids, depth+1)
			}
		}
	}
	walk(top, 0)
	t := &Timeline{Rows: len(rows), Truncated: truncated}
	for _, o := range critical {
		t.Critical = append(t.Critical, o.state)
	}
	onPath := map[*occurrence]bool{}
	for _, o := range critical {
		onPath[o] = true
	}
	t.SVG = drawTimeline(rows, start, end, onPath, lang)
	return t
}

// criticalPath is the chain of entries that determined the end, first
// to last, a Parallel or Map before the chain inside it that ended it:
// each entry's predecessor is the one whose end its entry follows in the
// history (pred).
func criticalPath(top []*occurrence, inside map[*occurrence][]*occurrence, pred map[*occurrence]*occurrence, endOf func(*occurrence) time.Time, order map[*occurrence]int) []*occurrence {
	seen := map[*occurrence]bool{}
	var chain func(last *occurrence) []*occurrence
	chain = func(last *occurrence) []*occurrence {
		var back []*occurrence
		for o := last; o != nil && !seen[o]; o = pred[o] {
			seen[o] = true
			back = append(back, o)
		}
		var out []*occurrence
		for i := len(back) - 1; i >= 0; i-- {
			o := back[i]
			out = append(out, o)
			if kids := inside[o]; len(kids) > 0 {
				// Its branch or iteration that ended last ended it.
				out = append(out, chain(latest(kids, endOf(o), endOf, order))...)
			}
		}
		return out
	}
	return chain(latest(top, time.Time{}, endOf, order))
}

// latest is the entry of a list that ended last (not after limit, when
// set); of those ending together, the last entered.
func latest(list []*occurrence, limit time.Time, endOf func(*occurrence) time.Time, order map[*occurrence]int) *occurrence {
	var best *occurrence
	for _, o := range list {
		e := endOf(o)
		if !limit.IsZero() && e.After(limit) {
			continue
		}
		if best == nil || e.After(endOf(best)) || (e.Equal(endOf(best)) && order[o] > order[best]) {
			best = o
		}
	}
	return best
}

// The timeline's geometry, in pixels.
const (
	tlLabel  = 220
	tlWidth  = 760
	tlRow    = 20
	tlBar    = 12
	tlAxis   = 24
	tlIndent = 12
)

func drawTimeline(rows []timelineRow, start, end time.Time, critical map[*occurrence]bool, lang string) template.HTML {
	span := end.Sub(start)
	if span <= 0 {
		span = time.Millisecond
	}
	x := func(t time.Time) float64 {
		d := min(max(t.Sub(start), 0), span)
		return tlLabel + float64(tlWidth)*float64(d)/float64(span)
	}
	h := tlAxis + len(rows)*tlRow + 4
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img">`, tlLabel+tlWidth+10, h, tlLabel+tlWidth+10, h)
	// The axis: five ticks of elapsed time.
	for i := 0; i <= 4; i++ {
		px := tlLabel + float64(tlWidth)*float64(i)/4
		fmt.Fprintf(&b, `<line class="tl-tick" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`, px, tlAxis-4, px, h)
		anchor := "middle"
		if i == 4 {
			anchor = "end"
		} else if i == 0 {
			anchor = "start"
		}
		fmt.Fprintf(&b, `<text class="tl-axis" x="%.1f" y="%d" text-anchor="%s">+%s</text>`, px, tlAxis-8, anchor, formatDuration(lang, span*time.Duration(i)/4))
	}
	for i, r := range rows {
		y := tlAxis + i*tlRow
		cls := "tl-row"
		if critical[r.o] {
			cls += " critical"
		}
		fmt.Fprintf(&b, `<g class="%s" data-state="%s">`, cls, template.HTMLEscapeString(r.o.state))
		fmt.Fprintf(&b, `<text class="tl-label" x="%d" y="%d">%s</text>`, 4+r.depth*tlIndent, y+tlBar+1, template.HTMLEscapeString(r.label))
		for _, s := range r.segs {
			x0, x1 := x(s.from), x(s.to)
			fmt.Fprintf(&b, `<rect class="seg %s" x="%.1f" y="%d" width="%.1f" height="%d" rx="2"><title>%s</title></rect>`,
				s.class, x0, y+(tlRow-tlBar)/2, max(x1-x0, 1.5), tlBar, template.HTMLEscapeString(s.title))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
