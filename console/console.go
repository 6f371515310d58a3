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
//	GET /console/executions/status?arn=    JSON for the live graph
//	GET /console/executions/state?arn=&state=  JSON of one state's input, output, error
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

	"stepwise/asl"
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
	now       func() time.Time
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
	// Now is the execution time (the engine's clock), which a running
	// execution's duration is measured to; nil means time.Now.
	Now func() time.Time
}

// ScheduleView is a schedule on the schedules page.
type ScheduleView struct {
	Arn, Group, Name, State string
	Expression, Timezone    string
	Target                  string
	LastFired               *time.Time
	Next                    []time.Time
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
	c := &Console{svc: svc, log: log, signIn: opts.SignIn, prices: prices, schedules: opts.Schedules, now: now,
		pages: map[string]*template.Template{}, mux: http.NewServeMux()}
	for _, name := range []string{"machines", "machine", "execution", "activities", "schedules", "notfound", "signin"} {
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
	if c.schedules != nil {
		// Not under /schedules: that is the Scheduler API's.
		c.mux.HandleFunc("GET /schedule-list", c.scheduleList)
	}
	c.mux.HandleFunc("GET /console/executions/status", c.executionStatus)
	c.mux.HandleFunc("GET /console/executions/state", c.stateDetails)
	c.mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) { c.notFound(w, r, r.URL.Path) })
	return c, nil
}

// ServeHTTP serves a GET request of the console.
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
	// (the sign-in page); Schedules shows the schedules' link.
	SignOut, NoNav, Schedules bool
}

func (c *Console) newPage(r *http.Request, title string) page {
	lang := language(r)
	p := page{Lang: lang, Title: title, Path: r.URL.Path, Script: map[string]string{}, SignOut: c.signIn, Schedules: c.schedules != nil}
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
	c.render(w, http.StatusNotFound, "notfound", struct {
		page
		What string
	}{c.newPage(r, translate(language(r), "notFound")), what})
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
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// machineRow is a state machine in the list.
type machineRow struct {
	service.StateMachineListItem
	Counts map[string]int
}

func (c *Console) machines(w http.ResponseWriter, r *http.Request) {
	var rows []machineRow
	in := &service.ListStateMachinesInput{MaxResults: ptr(1000)}
	for {
		out, err := c.svc.ListStateMachines(r.Context(), in)
		if err != nil {
			c.fail(w, r, "/", err)
			return
		}
		for _, sm := range out.StateMachines {
			counts, err := c.counts(r, sm.StateMachineArn)
			if err != nil {
				c.fail(w, r, "/", err)
				return
			}
			rows = append(rows, machineRow{sm, counts})
		}
		if out.NextToken == "" {
			break
		}
		in.NextToken = &out.NextToken
	}
	c.render(w, http.StatusOK, "machines", struct {
		page
		Machines []machineRow
		Statuses []string
	}{c.newPage(r, translate(language(r), "stateMachines")), rows, executionStatuses})
}

var executionStatuses = []string{"RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE"}

// counts counts a state machine's executions by status.
func (c *Console) counts(r *http.Request, arn string) (map[string]int, error) {
	counts := map[string]int{}
	in := &service.ListExecutionsInput{StateMachineArn: arn, MaxResults: ptr(1000)}
	for {
		out, err := c.svc.ListExecutions(r.Context(), in)
		if err != nil {
			return nil, err
		}
		for _, x := range out.Executions {
			counts[x.Status]++
		}
		if out.NextToken == "" {
			return counts, nil
		}
		in.NextToken = &out.NextToken
	}
}

func (c *Console) machine(w http.ResponseWriter, r *http.Request) {
	arn := r.PathValue("arn")
	sm, err := c.svc.DescribeStateMachine(r.Context(), &service.DescribeStateMachineInput{StateMachineArn: arn})
	if err != nil {
		c.fail(w, r, arn, err)
		return
	}
	m, _ := asl.ParseWith([]byte(sm.Definition), asl.Options{Type: sm.Type})
	filter := r.URL.Query().Get("status")
	in := &service.ListExecutionsInput{StateMachineArn: arn, StatusFilter: filter, MaxResults: ptr(50)}
	if tok := r.URL.Query().Get("next"); tok != "" {
		in.NextToken = &tok
	}
	list, err := c.svc.ListExecutions(r.Context(), in)
	if err != nil {
		c.fail(w, r, arn, err)
		return
	}
	versions, aliases, err := c.versionsAndAliases(r, arn)
	if err != nil {
		c.fail(w, r, arn, err)
		return
	}
	policies := c.policies(r, sm.StateMachineArn)
	c.render(w, http.StatusOK, "machine", struct {
		page
		Machine    *service.DescribeStateMachineOutput
		Graph      *graph
		Definition string
		Executions []service.ExecutionListItem
		Next       string
		Filter     string
		Statuses   []string
		Versions   []service.StateMachineVersionListItem
		Aliases    []*service.DescribeStateMachineAliasOutput
		Policies   []policyView
	}{c.newPage(r, sm.Name), sm, graphOf(m), prettyJSON(sm.Definition), list.Executions, list.NextToken, filter, executionStatuses, versions, aliases, policies})
}

// policyView is a state's failure policies, as its state machine's tags
// set them.
type policyView struct {
	State    string
	Policies string
}

// policies lists the failure policies a state machine's tags set (those
// of the state machine a version belongs to); none when they cannot be
// read.
func (c *Console) policies(r *http.Request, smArn string) []policyView {
	if i := strings.LastIndexByte(smArn, ':'); i >= 0 && strings.Count(smArn, ":") == 7 {
		smArn = smArn[:i] // a version's or an alias's
	}
	tags, err := c.svc.ListTagsForResource(r.Context(), &service.ListTagsForResourceInput{ResourceArn: smArn})
	if err != nil {
		return nil
	}
	var out []policyView
	for _, t := range tags.Tags {
		if t.Key == nil || !strings.HasPrefix(*t.Key, service.PolicyTagPrefix) {
			continue
		}
		out = append(out, policyView{State: strings.TrimPrefix(*t.Key, service.PolicyTagPrefix), Policies: deref(t.Value)})
	}
	return out
}

// versionsAndAliases lists a state machine's versions (the newest 50)
// and its aliases with their routing; none for a version's page.
func (c *Console) versionsAndAliases(r *http.Request, arn string) ([]service.StateMachineVersionListItem, []*service.DescribeStateMachineAliasOutput, error) {
	if strings.Count(arn, ":") > 6 {
		return nil, nil, nil // a version: its page is the state machine's as published
	}
	vs, err := c.svc.ListStateMachineVersions(r.Context(), &service.ListStateMachineVersionsInput{StateMachineArn: arn, MaxResults: ptr(50)})
	if err != nil {
		return nil, nil, err
	}
	as, err := c.svc.ListStateMachineAliases(r.Context(), &service.ListStateMachineAliasesInput{StateMachineArn: arn, MaxResults: ptr(50)})
	if err != nil {
		return nil, nil, err
	}
	var aliases []*service.DescribeStateMachineAliasOutput
	for _, a := range as.StateMachineAliases {
		d, err := c.svc.DescribeStateMachineAlias(r.Context(), &service.DescribeStateMachineAliasInput{StateMachineAliasArn: a.StateMachineAliasArn})
		var apiErr *sfnapi.Error
		if errors.As(err, &apiErr) && apiErr.Code == sfnapi.CodeResourceNotFound {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, nil, err
		}
		aliases = append(aliases, d)
	}
	return vs.StateMachineVersions, aliases, nil
}

func graphOf(m *asl.StateMachine) *graph {
	if m == nil {
		return nil
	}
	return buildGraph(m)
}

// eventRow is an event in the history table.
type eventRow struct {
	*event
	State     string
	ElapsedMs int64
	Details   string
}

func (c *Console) execution(w http.ResponseWriter, r *http.Request) {
	arn := r.PathValue("arn")
	x, err := c.svc.DescribeExecution(r.Context(), &service.DescribeExecutionInput{ExecutionArn: arn})
	if err != nil {
		c.fail(w, r, arn, err)
		return
	}
	events, err := c.history(r, arn)
	if err != nil {
		c.fail(w, r, arn, err)
		return
	}
	a := analyze(events, x.Status)
	var g *graph
	if x.MapRunArn != "" {
		// A map run's child runs the Map's ItemProcessor.
		if d, err := c.svc.DescribeStateMachineForExecution(r.Context(), &service.DescribeStateMachineForExecutionInput{ExecutionArn: arn}); err == nil {
			m, _ := asl.ParseWith([]byte(d.Definition), asl.Options{})
			g = graphOf(m)
		}
	} else if sm, err := c.svc.DescribeStateMachine(r.Context(), &service.DescribeStateMachineInput{StateMachineArn: x.StateMachineArn}); err == nil {
		m, _ := asl.ParseWith([]byte(sm.Definition), asl.Options{Type: sm.Type})
		g = graphOf(m)
	}
	runs, parent := c.mapRuns(r, x)
	// The history table shows a page of events at a time.
	from := 0
	if v := r.URL.Query().Get("from"); v != "" {
		fmt.Sscan(v, &from)
	}
	from = max(0, min(from, len(events)))
	to := min(from+historyPage, len(events))
	rows := make([]eventRow, 0, to-from)
	start := time.Time(x.StartDate)
	for _, ev := range events[from:to] {
		rows = append(rows, eventRow{event: ev, State: stateOf(ev, a), ElapsedMs: elapsedMs(start, ev.Timestamp), Details: prettyJSON(string(ev.Raw))})
	}
	c.render(w, http.StatusOK, "execution", struct {
		page
		X        *service.DescribeExecutionOutput
		Graph    *graph
		States   map[string]string
		Events   []eventRow
		Total    int
		From, To int
		Next     int
		Input    string
		Output   string
		MapRuns  []mapRunView
		Parent   string // the parent execution of a map run's child
		Machine  string // the state machine's page (the parent's, for a child)
		Cost     costView
		Duration string
	}{c.newPage(r, x.Name), x, g, a.statuses(), rows, len(events), from + 1, to, nextFrom(to, len(events)),
		prettyJSON(deref(x.Input)), prettyJSON(deref(x.Output)), runs, parent, machineOf(x.StateMachineArn), c.cost(x, events),
		c.duration(x.StartDate, x.StopDate).Round(time.Millisecond).String()})
}

// mapRunView is a map run on its execution's page: its counts and its
// first children.
type mapRunView struct {
	Run        *service.DescribeMapRunOutput
	Items      mapRunCounts
	Executions mapRunCounts
	Children   []service.ExecutionListItem
	More       bool
}

type mapRunCounts struct {
	Pending, Running, Succeeded, Failed, TimedOut, Aborted, Total int64
}

// mapRunChildren is how many children of a map run its execution's page
// lists.
const mapRunChildren = 100

// mapRuns are the map runs an execution started, and for a map run's
// child the execution that started it. What cannot be read is left out.
func (c *Console) mapRuns(r *http.Request, x *service.DescribeExecutionOutput) ([]mapRunView, string) {
	ctx := r.Context()
	parent := ""
	if x.MapRunArn != "" {
		if d, err := c.svc.DescribeMapRun(ctx, &service.DescribeMapRunInput{MapRunArn: x.MapRunArn}); err == nil {
			parent = d.ExecutionArn
		}
	}
	list, err := c.svc.ListMapRuns(ctx, &service.ListMapRunsInput{ExecutionArn: x.ExecutionArn})
	if err != nil {
		return nil, parent
	}
	var out []mapRunView
	for _, it := range list.MapRuns {
		d, err := c.svc.DescribeMapRun(ctx, &service.DescribeMapRunInput{MapRunArn: it.MapRunArn})
		if err != nil {
			continue
		}
		v := mapRunView{Run: d}
		_ = json.Unmarshal(d.ItemCounts, &v.Items)
		_ = json.Unmarshal(d.ExecutionCounts, &v.Executions)
		if kids, err := c.svc.ListExecutions(ctx, &service.ListExecutionsInput{MapRunArn: it.MapRunArn, MaxResults: ptr(mapRunChildren)}); err == nil {
			v.Children, v.More = kids.Executions, kids.NextToken != ""
		}
		out = append(out, v)
	}
	return out, parent
}

func nextFrom(to, total int) int {
	if to < total {
		return to
	}
	return -1
}

// stateOf names the state an event belongs to, for the history table.
func stateOf(ev *event, a *analysis) string { return a.owners[ev.ID] }

// history reads an execution's whole history.
func (c *Console) history(r *http.Request, arn string) ([]*event, error) {
	var events []*event
	in := &service.GetExecutionHistoryInput{ExecutionArn: arn, MaxResults: ptr(1000)}
	for {
		out, err := c.svc.GetExecutionHistory(r.Context(), in)
		if err != nil {
			return nil, err
		}
		for _, raw := range out.Events {
			ev, err := parseEvent(raw)
			if err != nil {
				return nil, err
			}
			events = append(events, ev)
		}
		if out.NextToken == "" {
			return events, nil
		}
		in.NextToken = &out.NextToken
	}
}

// executionStatus answers the live graph's poll.
func (c *Console) executionStatus(w http.ResponseWriter, r *http.Request) {
	arn := r.URL.Query().Get("arn")
	x, err := c.svc.DescribeExecution(r.Context(), &service.DescribeExecutionInput{ExecutionArn: arn})
	if err != nil {
		c.jsonError(w, err)
		return
	}
	events, err := c.history(r, arn)
	if err != nil {
		c.jsonError(w, err)
		return
	}
	out := map[string]any{"status": x.Status, "states": analyze(events, x.Status).statuses(),
		"output": prettyJSON(deref(x.Output)), "error": deref(x.Error), "cause": deref(x.Cause)}
	if x.StopDate != nil {
		out["stopDate"] = formatTime(time.Time(*x.StopDate))
	}
	writeJSON(w, http.StatusOK, out)
}

// stateDetails answers a click on a node: the state's latest entry.
func (c *Console) stateDetails(w http.ResponseWriter, r *http.Request) {
	arn, state := r.URL.Query().Get("arn"), r.URL.Query().Get("state")
	x, err := c.svc.DescribeExecution(r.Context(), &service.DescribeExecutionInput{ExecutionArn: arn})
	if err != nil {
		c.jsonError(w, err)
		return
	}
	events, err := c.history(r, arn)
	if err != nil {
		c.jsonError(w, err)
		return
	}
	a := analyze(events, x.Status)
	if v := r.URL.Query().Get("iteration"); v != "" {
		c.iterationDetails(w, r, a, x, state, v)
		return
	}
	out := map[string]any{"state": state, "status": statusNotRun}
	if o := a.latest(state); o != nil {
		out["status"] = o.status
		out["input"] = prettyJSON(o.input)
		out["output"] = prettyJSON(o.output)
		out["error"], out["cause"] = o.err, o.cause
		st := c.definitionState(r, x.StateMachineArn, state)
		if o.kind == "Fail" && o.err == "" && st != nil {
			// A Fail state's error is its own, written in the definition.
			out["error"], out["cause"] = st.Error, st.Cause
		}
		if st != nil && len(st.Branches) > 0 {
			// A Parallel's branches, each with the most telling status
			// of its states.
			statuses := a.statuses()
			var branches []map[string]any
			for i, b := range st.Branches {
				best := statusNotRun
				for _, name := range b.Order {
					if s := statuses[name]; precedence[s] > precedence[best] {
						best = s
					}
				}
				branches = append(branches, map[string]any{"index": i, "start": b.StartAt, "status": best})
			}
			out["branches"] = branches
		}
		out["retries"] = o.retries
		out["runs"] = len(a.occurrences[state])
		if !o.exited.IsZero() {
			out["durationMs"] = elapsedMs(o.entered, o.exited)
		}
		var its []map[string]any
		for i := 0; i < len(o.iterations); i++ {
			its = append(its, map[string]any{"index": i, "status": o.iterations[i]})
		}
		if its != nil {
			out["iterations"] = its
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// iterationEventLimit bounds the events an iteration's details list.
const iterationEventLimit = 1000

// iterationDetails answers a click on one of a Map's iterations: the
// states that ran within it, each with its input, output and error, and
// its events.
func (c *Console) iterationDetails(w http.ResponseWriter, r *http.Request, a *analysis, x *service.DescribeExecutionOutput, state, v string) {
	start := time.Time(x.StartDate)
	index, err := strconv.Atoi(v)
	m := a.latest(state)
	if err != nil || m == nil || m.kind != "Map" {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "No iteration " + v + " of state " + state})
		return
	}
	status, ok := m.iterations[index]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "No iteration " + v + " of state " + state})
		return
	}
	states := []map[string]any{}
	for _, o := range a.iterationOccurrences(m, index) {
		st := map[string]any{"state": o.state, "type": o.kind, "status": o.status, "retries": o.retries,
			"input": prettyJSON(o.input), "output": prettyJSON(o.output), "error": o.err, "cause": o.cause}
		if o.kind == "Fail" && o.err == "" {
			// A Fail state's error is its own, written in the definition.
			if def := c.definitionState(r, x.StateMachineArn, o.state); def != nil {
				st["error"], st["cause"] = def.Error, def.Cause
			}
		}
		if !o.exited.IsZero() {
			st["durationMs"] = elapsedMs(o.entered, o.exited)
		}
		states = append(states, st)
	}
	evs := a.iterationEvents(m, index)
	list := make([]map[string]any, 0, min(len(evs), iterationEventLimit))
	for _, ev := range evs[:min(len(evs), iterationEventLimit)] {
		list = append(list, map[string]any{"id": ev.ID, "type": ev.Type, "step": a.owners[ev.ID],
			"elapsedMs": elapsedMs(start, ev.Timestamp), "timestamp": formatTime(ev.Timestamp)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"state": state, "iteration": index, "status": status,
		"states": states, "events": list, "totalEvents": len(evs)})
}

// definitionState returns a state of a state machine's definition.
func (c *Console) definitionState(r *http.Request, smArn, name string) *asl.State {
	sm, err := c.svc.DescribeStateMachine(r.Context(), &service.DescribeStateMachineInput{StateMachineArn: smArn})
	if err != nil {
		return nil
	}
	m, _ := asl.ParseWith([]byte(sm.Definition), asl.Options{Type: sm.Type})
	if m == nil {
		return nil
	}
	var find func(m *asl.StateMachine) *asl.State
	find = func(m *asl.StateMachine) *asl.State {
		if st, ok := m.States[name]; ok {
			return st
		}
		for _, st := range m.States {
			for _, b := range st.Branches {
				if found := find(b); found != nil {
					return found
				}
			}
			if st.ItemProcessor != nil {
				if found := find(st.ItemProcessor); found != nil {
					return found
				}
			}
		}
		return nil
	}
	return find(m)
}

func (c *Console) jsonError(w http.ResponseWriter, err error) {
	var apiErr *sfnapi.Error
	if errors.As(err, &apiErr) {
		status := http.StatusBadRequest
		if strings.HasSuffix(apiErr.Code, "DoesNotExist") {
			status = http.StatusNotFound
		}
		writeJSON(w, status, map[string]string{"__type": apiErr.Code, "message": apiErr.Message})
		return
	}
	writeJSON(w, http.StatusInternalServerError, map[string]string{"message": err.Error()})
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
	"time":    func(t service.Time) string { return formatTime(time.Time(t)) },
	"timePtr": func(t *service.Time) string { return formatTimePtr(t) },
	// clock writes a time.Time (or *time.Time) as the other times are.
	"clock": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return formatTime(v)
		case *time.Time:
			if v != nil {
				return formatTime(*v)
			}
		}
		return ""
	},
	"arnPath": func(arn string) string { return url.PathEscape(arn) },
	// versionOf is a version ARN's number, as "v2".
	"versionOf": func(arn string) string { return "v" + arn[strings.LastIndexByte(arn, ':')+1:] },
	"query":     url.QueryEscape,
	"lower":     strings.ToLower,
	"deref":     deref,
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

func formatTimePtr(t *service.Time) string {
	if t == nil {
		return ""
	}
	return formatTime(time.Time(*t))
}

// duration is how long an execution ran, or has run until now (execution
// time): never negative.
func (c *Console) duration(start service.Time, stop *service.Time) time.Duration {
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
	c.render(w, http.StatusOK, "schedules", struct {
		page
		Schedules []ScheduleView
	}{c.newPage(r, translate(language(r), "schedules")), list})
}
