package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"stepwise/service"
)

// A schedule's page shows its definition, its next runs and the
// executions it started, with buttons that enable or disable it:
//
//	GET  /schedule-list/<group>/<name>   the schedule
//	POST /schedule-list/<group>/<name>   state=ENABLED or DISABLED, or hold=next or
//	                                     release (skip the next run, or not), then back to it
//
// The POST is a form of the console's own page: the server refuses it
// from another origin and, with sign-in, without a session.

// Scheduler reads one schedule and changes its state, as the Scheduler
// API does (GetSchedule, UpdateSchedule).
type Scheduler interface {
	// Schedule returns a schedule with its next runs (at most 10);
	// ErrNoSchedule when there is none of that group and name.
	Schedule(ctx context.Context, group, name string) (*ScheduleDetail, error)
	// SetScheduleState enables (ENABLED) or disables (DISABLED) a
	// schedule, its other settings unchanged.
	SetScheduleState(ctx context.Context, group, name, state string) error
	// HoldNext holds a schedule's next run (it is skipped, the ones after
	// it fire), or with hold false takes the hold back.
	HoldNext(ctx context.Context, group, name string, hold bool) error
}

// ErrNoSchedule is Scheduler's error for a schedule that does not exist.
var ErrNoSchedule = errors.New("no such schedule")

// ScheduleDetail is a schedule on its own page.
type ScheduleDetail struct {
	ScheduleView
	Description           string
	StartDate, EndDate    *time.Time
	ActionAfterCompletion string
	// FlexibleMode is OFF or FLEXIBLE, within FlexibleMinutes.
	FlexibleMode    string
	FlexibleMinutes int
	// The target's retry policy, and its dead-letter queue ("" for none).
	MaxEventAgeSeconds, MaxRetryAttempts int
	DeadLetterArn                        string
	// Input is the target's input (for the universal target, its
	// StartExecution request).
	Input                 string
	Created, LastModified time.Time
	// StateMachine is the state machine the schedule starts (the
	// universal target's request names it); "" for none.
	StateMachine string
	// ExecutionPrefix begins the names of the executions the schedule
	// starts; "" when their names do not say which schedule started them.
	ExecutionPrefix string
}

// scheduleRoutes serves a schedule's page and its form.
func (c *Console) scheduleRoutes() {
	if c.schedules == nil || c.scheduler == nil {
		return
	}
	c.mux.HandleFunc("GET /schedule-list/{group}/{name}", c.schedule)
	c.mux.HandleFunc("POST /schedule-list/{group}/{name}", c.setScheduleState)
}

// recentScheduleRuns is how many executions a schedule's page lists.
const recentScheduleRuns = 20

func (c *Console) schedule(w http.ResponseWriter, r *http.Request) {
	group, name := r.PathValue("group"), r.PathValue("name")
	d, err := c.scheduler.Schedule(r.Context(), group, name)
	if errors.Is(err, ErrNoSchedule) {
		c.notFound(w, r, "schedule "+group+"/"+name)
		return
	}
	if err != nil {
		c.fail(w, r, "schedule "+group+"/"+name, err)
		return
	}
	var runs []service.ExecutionListItem
	runsErr, more := "", ""
	if d.StateMachine != "" {
		list, err := c.svc.SearchExecutions(r.Context(), &service.SearchExecutionsInput{StateMachineArn: d.StateMachine,
			NamePrefix: d.ExecutionPrefix, MaxResults: recentScheduleRuns})
		if err != nil {
			runsErr = err.Error() // the state machine deleted, say: the schedule's page still shows
		} else {
			runs = list.Executions
			if list.NextToken != "" {
				more = "/state-machines/" + url.PathEscape(d.StateMachine) + "?prefix=" + url.QueryEscape(d.ExecutionPrefix)
			}
		}
	}
	c.render(w, http.StatusOK, "schedule", struct {
		page
		Schedule   *ScheduleDetail
		Executions []service.ExecutionListItem
		RunsError  string
		More       string
	}{c.newPage(r, d.Name), d, runs, runsErr, more})
}

// setScheduleState enables or disables a schedule, then shows it.
func (c *Console) setScheduleState(w http.ResponseWriter, r *http.Request) {
	group, name := r.PathValue("group"), r.PathValue("name")
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read: "+err.Error(), http.StatusBadRequest)
		return
	}
	state, hold := r.PostFormValue("state"), r.PostFormValue("hold")
	var err error
	switch {
	case hold == "next" || hold == "release":
		err = c.scheduler.HoldNext(r.Context(), group, name, hold == "next")
	case hold != "":
		http.Error(w, "hold must be next or release, not \""+hold+"\"", http.StatusBadRequest)
		return
	case state != "ENABLED" && state != "DISABLED":
		http.Error(w, "state must be ENABLED or DISABLED, not \""+state+"\"", http.StatusBadRequest)
		return
	default:
		err = c.scheduler.SetScheduleState(r.Context(), group, name, state)
	}
	if errors.Is(err, ErrNoSchedule) {
		c.notFound(w, r, "schedule "+group+"/"+name)
		return
	}
	if err != nil {
		c.log.Error("console: change a schedule", "group", group, "name", name, "state", state, "hold", hold, "error", err)
		http.Error(w, "the schedule could not be changed: "+err.Error(), http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, "/schedule-list/"+url.PathEscape(group)+"/"+url.PathEscape(name), http.StatusSeeOther)
}
