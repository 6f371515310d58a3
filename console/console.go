// Package console is the web console: GET / and its pages, on the API's
// port. It reads through the service only (state machines, executions,
// histories, activities) and renders pages on the server with
// html/template, so every name, input and error is escaped; the pages'
// script (static/, embedded) draws the graph with the vendored dagre
// layout, polls a running execution, and acts (start, stop, redrive) by
// calling the Step Functions API itself, POST / with X-Amz-Target, like
// any client.
//
//	GET /                                  state machines, with executions by status
//	GET /state-machines/<stateMachineArn>  graph, definition, executions, start form
//	GET /executions/<executionArn>         status, graph colored by history, history
//	GET /activities                        activities, tasks waiting, recent workers
//	GET /tonight?tz=                       today's and tomorrow's runs, late jobs (tonight.go)
//	GET /schedule-list                     schedules, with their next runs
//	GET /schedule-list/<group>/<name>      a schedule, its next runs and executions (POST: enable, disable)
//	GET /console/executions/status?arn=    JSON for the live graph
//	GET /console/executions/state?arn=&state=  JSON of one state's input, output, error
//	GET /console/executions/recording?arn= the execution as a test file (same origin only, bounded)
//	GET /static/<file>                     embedded assets
//
// With Options.SignIn (serve --credentials), SignIn renders the sign-in
// page, which the server's gate (internal/security/authn) serves at /signin, and
// every page has a sign-out button.
package console

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"stepwise/history"
	"stepwise/service"
	"stepwise/sfnapi"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// historyPage is how many events an execution's page lists at once.
const historyPage = 1000

// Console serves the console's pages.
type Console struct {
	svc       *service.Service
	log       *slog.Logger
	signIn    bool
	pages     map[string]*template.Template
	mux       *http.ServeMux
	prices    history.Prices
	schedules func(ctx context.Context) ([]ScheduleView, error)
	scheduler Scheduler
	// eventSourceList lists the event sources (eventsources.go).
	eventSourceList func(ctx context.Context) []EventSource
	now             func() time.Time
	// recordingLimits bound an execution's download as a test.
	recordingLimits RecordingLimits
	// plannedRuns lists the schedules' firings for tonight's page.
	plannedRuns  func(ctx context.Context, from, to time.Time) ([]PlannedRun, error)
	fileTriggers func(ctx context.Context) ([]FileTriggerView, error)
	usual        usualDurations
}

// Options configure the console.
type Options struct {
	// Logger logs what the console could not read or render; nil
	// discards.
	Logger *slog.Logger
	// SignIn says that the server requires signing in: pages have a
	// sign-out button (a form posting to /signout).
	SignIn bool
	// Prices estimate what an execution costs on AWS (zero: AWS's list
	// prices, history.DefaultPrices).
	Prices history.Prices
	// Schedules lists the schedules (EventBridge Scheduler) for their
	// page; nil when the server has none.
	Schedules func(ctx context.Context) ([]ScheduleView, error)
	// Scheduler, with Schedules, gives each schedule its page, where it
	// is enabled or disabled (schedules.go).
	Scheduler Scheduler
	// Now is the execution time (the engine's clock), which a running
	// execution's duration is measured to; nil means time.Now.
	Now func() time.Time
	// Recording bounds an execution's download as a test; a zero field
	// takes DefaultRecordingLimits'.
	Recording RecordingLimits
	// EventSources lists the deployed stacks' event sources for their
	// page (eventsources.go); nil: the page is not served.
	EventSources func(ctx context.Context) []EventSource
	// Planned lists the schedules' firings at or after from and before
	// to, calendars applied, for tonight's page (tonight.go); nil lists
	// none.
	Planned func(ctx context.Context, from, to time.Time) ([]PlannedRun, error)
	// FileTriggers lists the file-arrival triggers, each with its last
	// files started, for the schedules page (filetriggers.go); nil: the
	// page has no such section.
	FileTriggers func(ctx context.Context) ([]FileTriggerView, error)
}

// ScheduleView is a schedule on the schedules page.
type ScheduleView struct {
	Arn, Group, Name, State string
	Expression, Timezone    string
	Target                  string
	LastFired               *time.Time
	Next                    []time.Time
	// Calendar is the business calendar it fires by and its rule
	// ("jp:next"), NotAWS what it asks that AWS would not do.
	Calendar string
	NotAWS   []Note
	// Held is when the next run that is held (skipped) would have fired,
	// nil for none; Skipped are the runs holds skipped, the latest last.
	Held    *time.Time
	Skipped []time.Time
}

// A Note is something a schedule asks that AWS would not do, or why it
// does not fire, worded in the page's language: Kind is the scheduler's
// (calendar, name-placeholders, input-placeholders, not-fired), with its
// parts.
type Note struct {
	Kind, Calendar, Rule, Detail string
}

// New returns the console over a service.
func New(svc *service.Service, log *slog.Logger) (*Console, error) {
	return NewWith(svc, Options{Logger: log})
}

// NewWith is New with options.
func NewWith(svc *service.Service, opts Options) (*Console, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	prices := opts.Prices
	if prices == (history.Prices{}) {
		prices = history.DefaultPrices
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	c := &Console{svc: svc, log: log, signIn: opts.SignIn, prices: prices, schedules: opts.Schedules, scheduler: opts.Scheduler, now: now, eventSourceList: opts.EventSources, plannedRuns: opts.Planned, fileTriggers: opts.FileTriggers,
		pages: map[string]*template.Template{}, mux: http.NewServeMux(), recordingLimits: opts.Recording}
	if c.recordingLimits.Children <= 0 {
		c.recordingLimits.Children = DefaultRecordingLimits.Children
	}
	if c.recordingLimits.Events <= 0 {
		c.recordingLimits.Events = DefaultRecordingLimits.Events
	}
	if c.recordingLimits.Bytes <= 0 {
		c.recordingLimits.Bytes = DefaultRecordingLimits.Bytes
	}
	for _, name := range []string{"machines", "machine", "execution", "activities", "schedules", "schedule", "eventsources", "tonight", "notfound", "signin"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", name, err)
		}
		c.pages[name] = t
	}
	static, _ := fs.Sub(staticFiles, "static")
	c.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	c.mux.HandleFunc("GET /{$}", c.machines)
	c.mux.HandleFunc("GET /state-machines/{arn...}", c.machine)
	c.mux.HandleFunc("GET /executions/{arn...}", c.execution)
	c.mux.HandleFunc("GET /activities", c.activities)
	c.mux.HandleFunc("GET /tonight", c.tonight)
	if c.schedules != nil {
		// Not under /schedules: that is the Scheduler API's.
		c.mux.HandleFunc("GET /schedule-list", c.scheduleList)
		c.scheduleRoutes()
	}
	if c.eventSourceList != nil {
		c.mux.HandleFunc("GET /event-sources", c.eventSources)
	}
	c.mux.HandleFunc("GET /console/executions/status", c.executionStatus)
	c.mux.HandleFunc("GET /console/executions/recording", c.recording)
	c.mux.HandleFunc("GET /console/executions/state", c.stateDetails)
	c.mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) { c.notFound(w, r, r.URL.Path) })
	return c, nil
}

// ServeHTTP serves a request of the console: a GET, or a schedule's form
// (a POST the server guards).
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}

// page is what every page's layout needs.
type page struct {
	Lang, Title, Path string
	Script            map[string]string // messages for the script
	// SignOut shows the sign-out button; NoNav hides the navigation
	// (the sign-in page); Schedules shows the schedules' link,
	// EventSources the event sources'.
	SignOut, NoNav, Schedules, EventSources bool
}

func (c *Console) newPage(r *http.Request, title string) page {
	lang := language(r)
	p := page{Lang: lang, Title: title, Path: r.URL.Path, Script: map[string]string{}, SignOut: c.signIn, Schedules: c.schedules != nil,
		EventSources: c.eventSourceList != nil}
	for _, k := range scriptMessages {
		p.Script[k] = translate(lang, k)
	}
	return p
}

// render writes a page.
func (c *Console) render(w http.ResponseWriter, status int, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var b strings.Builder
	if err := c.pages[name].Execute(&b, data); err != nil {
		c.log.Error("console: render page", "page", name, "error", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// SignIn renders the sign-in page with status: a form posting
// access_key_id, secret_access_key and next (the request's "next" value,
// the page to go to) to /signin. failed says that a sign-in was just
// refused.
func (c *Console) SignIn(w http.ResponseWriter, r *http.Request, status int, failed bool) {
	p := c.newPage(r, translate(language(r), "signIn"))
	p.SignOut, p.NoNav = false, true
	c.render(w, status, "signin", struct {
		page
		Next   string
		Failed bool
	}{p, r.FormValue("next"), failed})
}

func (c *Console) notFound(w http.ResponseWriter, r *http.Request, what string) {
	c.problem(w, r, http.StatusNotFound, what, nil)
}

// fail answers a request the service refused: a friendly 404 for what
// does not exist, else the error.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	var apiErr *sfnapi.Error
	if errors.As(err, &apiErr) && (strings.HasSuffix(apiErr.Code, "DoesNotExist") || apiErr.Code == "InvalidArn") {
		c.notFound(w, r, what)
		return
	}
	c.log.Error("console: read", "what", what, "error", err)
	c.problem(w, r, http.StatusInternalServerError, what, err)
}

// activityRow is an activity in the list.
type activityRow struct {
	service.ActivityListItem
	Waiting int
	Workers []workerRow
}

type workerRow struct {
	Name, LastPoll string
}

func (c *Console) activities(w http.ResponseWriter, r *http.Request) {
	var rows []activityRow
	in := &service.ListActivitiesInput{MaxResults: ptr(1000)}
	for {
		out, err := c.svc.ListActivities(r.Context(), in)
		if err != nil {
			c.fail(w, r, "/activities", err)
			return
		}
		for _, a := range out.Activities {
			st := c.svc.ActivityStatus(a.ActivityArn)
			row := activityRow{ActivityListItem: a, Waiting: st.Waiting}
			for _, wk := range st.Workers {
				row.Workers = append(row.Workers, workerRow{Name: wk.Name, LastPoll: formatTime(wk.LastPoll)})
			}
			rows = append(rows, row)
		}
		if out.NextToken == nil {
			break
		}
		in.NextToken = out.NextToken
	}
	c.render(w, http.StatusOK, "activities", struct {
		page
		Activities []activityRow
	}{c.newPage(r, translate(language(r), "activities")), rows})
}

// funcs are the templates' functions.
var funcs = template.FuncMap{
	"t":       translate,
	"time":    func(t history.EpochTime) template.HTML { return timeHTML(time.Time(t)) },
	"timePtr": func(t *history.EpochTime) template.HTML { return clockHTML(t) },
	// clock writes a time.Time (or *time.Time) as the other times are.
	"clock":   clockHTML,
	"arnPath": func(arn string) string { return url.PathEscape(arn) },
	// execName is an execution's name (its ARN's last part).
	"execName": func(arn string) string { return arn[strings.LastIndexByte(arn, ':')+1:] },
	// versionOf is a version ARN's number, as "v2".
	"versionOf": func(arn string) string { return "v" + arn[strings.LastIndexByte(arn, ':')+1:] },
	"query":     url.QueryEscape,
	"lower":     strings.ToLower,
	"deref":     deref,
	// join lists names: "Load, Report".
	"join": func(names []string) string { return strings.Join(names, ", ") },
	// rerunModes are the modes a rerun form offers.
	"rerunModes": func() []string { return []string{"FAILED", "NEXT", "STATE", "TOP", "WARNINGS"} },
	"statusKey": func(s string) string {
		return map[string]string{"RUNNING": "running", "SUCCEEDED": "succeeded", "FAILED": "failed", "TIMED_OUT": "failed", "ABORTED": "cancelled"}[s]
	},
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05.000 UTC")
}

// duration is how long an execution ran, or has run until now (execution
// time): never negative.
func (c *Console) duration(start history.EpochTime, stop *history.EpochTime) time.Duration {
	end := c.now()
	if stop != nil {
		end = time.Time(*stop)
	}
	return max(0, end.Sub(time.Time(start)))
}

// elapsedMs is the milliseconds from from to to, never negative (a
// history stamped by a clock that once went back stays readable).
func elapsedMs(from, to time.Time) int64 { return max(0, to.Sub(from).Milliseconds()) }

// prettyJSON indents JSON text, keeping its members' order and its
// numbers as written; text that is not JSON is kept as it is.
func prettyJSON(text string) string {
	if text == "" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(text), "", "  "); err != nil {
		return text
	}
	return b.String()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func ptr[T any](v T) *T { return &v }

// machineOf is the state machine whose page an execution's links to: for
// a map run's child (…:stateMachine:<name>/<label>), its parent's.
func machineOf(arn string) string {
	if i := strings.LastIndexByte(arn, ':'); i >= 0 {
		if j := strings.IndexByte(arn[i:], '/'); j >= 0 {
			return arn[:i+j]
		}
	}
	return arn
}

// costView is what an execution costs on AWS: its billable state
// transitions (STANDARD), or its billed duration and memory (EXPRESS),
// and the estimated price.
type costView struct {
	Express      bool
	Transitions  int
	BilledMillis int64
	BilledMB     int64
	USD          string
}

// cost estimates what an execution cost (so far) on AWS at the console's
// prices.
func (c *Console) cost(x *service.DescribeExecutionOutput, events []*event) costView {
	if strings.Contains(x.ExecutionArn, ":express:") {
		ms := history.BilledDuration(c.duration(x.StartDate, x.StopDate).Milliseconds())
		return costView{Express: true, BilledMillis: ms, BilledMB: 64, USD: usd(c.prices.Express(ms, 64))}
	}
	hist := make([]*history.Event, len(events))
	for i, ev := range events {
		hist[i] = &history.Event{ID: ev.ID, PreviousEventID: ev.Prev, Type: history.EventType(ev.Type)}
	}
	n := 0
	if len(hist) > 0 {
		n = history.StateTransitions(hist)
	}
	return costView{Transitions: n, USD: usd(c.prices.Standard(n))}
}

// usd writes a price in dollars, with the digits a small one needs.
func usd(v float64) string { return "$" + strconv.FormatFloat(v, 'f', -1, 64) }

// scheduleList shows the schedules: their expressions and time zones,
// the last slot fired and the next ones.
func (c *Console) scheduleList(w http.ResponseWriter, r *http.Request) {
	list, err := c.schedules(r.Context())
	if err != nil {
		c.fail(w, r, "schedules", err)
		return
	}
	var triggers []FileTriggerView
	if c.fileTriggers != nil {
		if triggers, err = c.fileTriggers(r.Context()); err != nil {
			c.fail(w, r, "schedules", err)
			return
		}
	}
	c.render(w, http.StatusOK, "schedules", struct {
		page
		Schedules    []ScheduleView
		FileTriggers []FileTriggerView
		Triggers     bool
	}{c.newPage(r, translate(language(r), "schedules")), list, triggers, c.fileTriggers != nil})
}
