package console

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"stepwise/service"
)

// Tonight's page lists what runs today and tomorrow in the operator's
// zone (?tz=, an IANA name; the page's script adds the browser's):
//
//	GET /tonight   the schedules' firings, with their executions' status,
//	               duration and usual duration; today's executions started
//	               by hand; the jobs running late
//
// The usual durations are medians of recent runs, read once a minute per
// state machine at the most (usualDurations).

// PlannedRun is a schedule's firing: when, and the execution it starts
// (StateMachine and Execution "" when its target is not a state machine).
type PlannedRun struct {
	Group, Name             string
	At                      time.Time
	StateMachine, Execution string
}

// usualRuns is how many recent runs a median is taken of.
const usualRuns = 20

// usualTTL is how long a state machine's medians are kept.
const usualTTL = time.Minute

// usual is what a state machine usually takes: the median of its last 20
// successful executions, and of each Task state's last 20 completed runs
// in them.
type usual struct {
	Execution time.Duration // 0: no successful execution yet
	States    map[string]time.Duration
	read      time.Time
}

// usualDurations caches each state machine's usual durations.
type usualDurations struct {
	mu sync.Mutex
	m  map[string]*usual
}

// usualOf is a state machine's usual durations: one query of its last 20
// successful executions and their histories' first page, at most once a
// minute.
func (c *Console) usualOf(ctx context.Context, sm string) *usual {
	c.usual.mu.Lock()
	if u, ok := c.usual.m[sm]; ok && c.now().Sub(u.read) < usualTTL {
		c.usual.mu.Unlock()
		return u
	}
	c.usual.mu.Unlock()
	u := &usual{States: map[string]time.Duration{}, read: c.now()}
	list, err := c.svc.SearchExecutions(ctx, &service.SearchExecutionsInput{StateMachineArn: sm, StatusFilter: "SUCCEEDED", MaxResults: usualRuns})
	if err == nil {
		var total []time.Duration
		runs := map[string][]time.Duration{}
		for _, x := range list.Executions {
			if x.StopDate != nil {
				total = append(total, time.Time(*x.StopDate).Sub(time.Time(x.StartDate)))
			}
			out, err := c.svc.GetExecutionHistory(ctx, &service.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn, MaxResults: ptr(1000)})
			if err != nil {
				continue
			}
			var events []*event
			for _, raw := range out.Events {
				if ev, err := parseEvent(raw); err == nil {
					events = append(events, ev)
				}
			}
			for state, os := range analyze(events, x.Status).occurrences {
				for _, o := range os {
					if o.kind == "Task" && !o.exited.IsZero() && len(runs[state]) < usualRuns {
						runs[state] = append(runs[state], o.exited.Sub(o.entered))
					}
				}
			}
		}
		u.Execution = median(total)
		for state, ds := range runs {
			u.States[state] = median(ds)
		}
	}
	c.usual.mu.Lock()
	if c.usual.m == nil {
		c.usual.m = map[string]*usual{}
	}
	c.usual.m[sm] = u
	c.usual.mu.Unlock()
	return u
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// LateJob is a Task state running past twice its usual duration.
type LateJob struct {
	StateMachine, Execution, State string
	// Entered is when the state was entered: with the execution and the
	// state, it names the job's run.
	Entered        time.Time
	Running, Usual time.Duration
}

// lateJobs are an execution's Task states running past twice their usual
// duration.
func (c *Console) lateJobs(ctx context.Context, sm, arn string, events []*event, status string) []LateJob {
	a := analyze(events, status)
	var out []LateJob
	var u *usual
	for state, os := range a.occurrences {
		for _, o := range os {
			if o.kind != "Task" || !o.open() {
				continue
			}
			if u == nil {
				u = c.usualOf(ctx, sm)
			}
			typical := u.States[state]
			if running := c.now().Sub(o.entered); typical > 0 && running > 2*typical {
				out = append(out, LateJob{StateMachine: sm, Execution: arn, State: state, Entered: o.entered, Running: running, Usual: typical})
			}
		}
	}
	slices.SortFunc(out, func(a, b LateJob) int { return strings.Compare(a.State, b.State) })
	return out
}

// LateJobs are the Task states of the running executions that run past
// twice their usual duration: one query of the running executions per
// state machine (at most 1000 of each).
func (c *Console) LateJobs(ctx context.Context) ([]LateJob, error) {
	var out []LateJob
	machines, err := c.svc.ListStateMachines(ctx, &service.ListStateMachinesInput{MaxResults: ptr(1000)})
	if err != nil {
		return nil, err
	}
	for _, m := range machines.StateMachines {
		list, err := c.svc.ListExecutions(ctx, &service.ListExecutionsInput{StateMachineArn: m.StateMachineArn, StatusFilter: "RUNNING", MaxResults: ptr(1000)})
		if err != nil {
			continue // deleted since
		}
		for _, x := range list.Executions {
			events, err := c.historyOf(ctx, x.ExecutionArn)
			if err != nil {
				continue // ended and gone
			}
			out = append(out, c.lateJobs(ctx, x.StateMachineArn, x.ExecutionArn, events, "RUNNING")...)
		}
	}
	return out, nil
}

// historyOf reads an execution's history.
func (c *Console) historyOf(ctx context.Context, arn string) ([]*event, error) {
	return c.history((&http.Request{}).WithContext(ctx), arn)
}

// tonightRow is a line of tonight's page.
type tonightRow struct {
	At                      *time.Time // planned; nil for a start by hand
	Schedule, Group         string
	StateMachine, Execution string // the execution's ARN when it started
	Name                    string
	Status                  string // "" not yet, or the execution's
	Duration, Usual, Diff   string
	Slower                  bool
	Late                    []LateJob
}

func (c *Console) tonight(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	lang := language(r)
	zone := r.URL.Query().Get("tz")
	loc, err := time.LoadLocation(zone)
	if zone == "" || err != nil {
		zone, loc = "UTC", time.UTC
	}
	now := c.now().In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	end := today.AddDate(0, 0, 2)
	planned, err := c.planned(ctx, today, end)
	if err != nil {
		c.fail(w, r, "/tonight", err)
		return
	}
	var rows []tonightRow
	seen := map[string]bool{}
	for _, p := range planned {
		row := tonightRow{At: &p.At, Schedule: p.Name, Group: p.Group, StateMachine: p.StateMachine, Name: p.Execution}
		if p.StateMachine != "" && p.Execution != "" {
			arn := executionArn(p.StateMachine, p.Execution)
			seen[arn] = true
			c.fillRow(ctx, &row, arn, lang)
		}
		rows = append(rows, row)
	}
	// Today's executions started by hand: those no firing names.
	var byHand []tonightRow
	machines, err := c.svc.ListStateMachines(ctx, &service.ListStateMachinesInput{MaxResults: ptr(1000)})
	if err == nil {
		for _, m := range machines.StateMachines {
			list, err := c.svc.SearchExecutions(ctx, &service.SearchExecutionsInput{StateMachineArn: m.StateMachineArn, StartedFrom: today, StartedBefore: today.AddDate(0, 0, 1), MaxResults: 100})
			if err != nil {
				continue
			}
			for _, x := range list.Executions {
				if seen[x.ExecutionArn] || x.MapRunArn != "" {
					continue
				}
				row := tonightRow{StateMachine: m.StateMachineArn, Name: x.Name}
				c.fillRow(ctx, &row, x.ExecutionArn, lang)
				byHand = append(byHand, row)
			}
		}
	}
	c.render(w, http.StatusOK, "tonight", struct {
		page
		Zone            string
		Today, Tomorrow string
		Rows, ByHand    []tonightRow
	}{c.newPage(r, translate(lang, "tonight")), zone, today.Format("2006-01-02"), today.AddDate(0, 0, 1).Format("2006-01-02"), rows, byHand})
}

// fillRow fills a row with its execution's status and durations; a row
// whose execution has not started stays "not yet".
func (c *Console) fillRow(ctx context.Context, row *tonightRow, arn, lang string) {
	x, err := c.svc.DescribeExecution(ctx, &service.DescribeExecutionInput{ExecutionArn: arn})
	if err != nil {
		return
	}
	row.Execution, row.Status = arn, x.Status
	d := c.duration(x.StartDate, x.StopDate)
	row.Duration = formatDuration(lang, d)
	u := c.usualOf(ctx, x.StateMachineArn)
	if u.Execution > 0 {
		row.Usual = formatDuration(lang, u.Execution)
		diff := d - u.Execution
		row.Slower = diff > 0
		if diff >= 0 {
			row.Diff = "+" + formatDuration(lang, diff)
		} else {
			row.Diff = "−" + formatDuration(lang, -diff)
		}
	}
	if x.Status == "RUNNING" {
		if events, err := c.historyOf(ctx, arn); err == nil {
			row.Late = c.lateJobs(ctx, x.StateMachineArn, arn, events, x.Status)
		}
	}
}

// executionArn is the ARN of a state machine's execution of a name.
func executionArn(sm, name string) string {
	return strings.Replace(sm, ":stateMachine:", ":execution:", 1) + ":" + name
}

// planned lists the firings in [from, to): none without schedules.
func (c *Console) planned(ctx context.Context, from, to time.Time) ([]PlannedRun, error) {
	if c.plannedRuns == nil {
		return nil, nil
	}
	return c.plannedRuns(ctx, from, to)
}

func init() {
	funcs["dur"] = formatDuration
	funcs["rowOf"] = func(lang, zone string, row tonightRow) map[string]any {
		return map[string]any{"Lang": lang, "Zone": zone, "Row": row}
	}
	for lang, m := range map[string]map[string]string{
		"en": {"tonight": "Tonight", "show": "Show", "plannedRuns": "Today and tomorrow", "plannedAt": "Planned", "schedule": "Schedule",
			"execution": "Execution", "usualDuration": "Usual", "difference": "Difference", "nothingPlanned": "No schedule fires today or tomorrow.",
			"startedByHand": "Started by hand today", "notYet": "Not yet", "runningLate": "Running late", "timeline": "Timeline",
			"criticalPath": "Critical path", "waitShaded": "Wait", "retrySegment": "Earlier try", "lateJobs": "Jobs running late",
			"tlQueued": "Scheduled, not started", "tlTruncated": "Only the first 500 entries are drawn."},
		"ja": {"tonight": "今夜の予定", "show": "表示", "plannedRuns": "今日と明日", "plannedAt": "予定時刻", "schedule": "スケジュール",
			"execution": "実行", "usualDuration": "通常", "difference": "差", "nothingPlanned": "今日と明日に起動するスケジュールはありません。",
			"startedByHand": "今日の手動実行", "notYet": "未実行", "runningLate": "遅延", "timeline": "タイムライン",
			"criticalPath": "クリティカルパス", "waitShaded": "待機", "retrySegment": "前回の試行", "lateJobs": "遅延しているジョブ",
			"tlQueued": "開始待ち", "tlTruncated": "最初の 500 件のみ表示しています。"},
	} {
		for k, v := range m {
			if _, ok := messages[lang][k]; !ok {
				messages[lang][k] = v
			}
		}
	}
}
