package console

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"stepwise/asl"
	"stepwise/service"
	"stepwise/sfnapi"
)

// machineRow is a state machine in the list.
type machineRow struct {
	service.StateMachineListItem
	Counts map[string]int
	// Last is its newest execution (nil when none).
	Last *service.ExecutionListItem
}

// machines lists the state machines whose name starts with the query's
// q (in any case), each with its executions counted by status and its
// newest one.
func (c *Console) machines(w http.ResponseWriter, r *http.Request) {
	var rows []machineRow
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	prefix := strings.ToLower(q)
	total := 0
	in := &service.ListStateMachinesInput{MaxResults: ptr(1000)}
	for {
		out, err := c.svc.ListStateMachines(r.Context(), in)
		if err != nil {
			c.fail(w, r, "/", err)
			return
		}
		total += len(out.StateMachines)
		for _, sm := range out.StateMachines {
			if !strings.HasPrefix(strings.ToLower(sm.Name), prefix) {
				continue
			}
			counts, last, err := c.counts(r, sm)
			if err != nil {
				c.fail(w, r, "/", err)
				return
			}
			rows = append(rows, machineRow{sm, counts, last})
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
		Query    string
		Total    int
	}{c.newPage(r, translate(language(r), "stateMachines")), rows, executionStatuses, q, total})
}

var executionStatuses = []string{"RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE"}

// counts counts a state machine's executions by status, and returns its
// newest one (nil when none), the first that the list, newest first,
// reads. An EXPRESS state machine's executions are not listed: none.
func (c *Console) counts(r *http.Request, sm service.StateMachineListItem) (map[string]int, *service.ExecutionListItem, error) {
	counts := map[string]int{}
	if sm.Type == "EXPRESS" {
		return counts, nil, nil
	}
	var last *service.ExecutionListItem
	in := &service.ListExecutionsInput{StateMachineArn: sm.StateMachineArn, MaxResults: ptr(1000)}
	for {
		out, err := c.svc.ListExecutions(r.Context(), in)
		if err != nil {
			return nil, nil, err
		}
		if last == nil && len(out.Executions) > 0 {
			last = &out.Executions[0]
		}
		for _, x := range out.Executions {
			counts[x.Status]++
		}
		if out.NextToken == "" {
			return counts, last, nil
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
	// An EXPRESS state machine's executions are not listed, as on AWS.
	f, list := executionFilter{TZ: "UTC"}, &service.ListExecutionsOutput{}
	if sm.Type != "EXPRESS" {
		f, list, err = c.searchExecutions(r, arn, 50)
		if err != nil && f.Err == "" {
			c.fail(w, r, arn, err)
			return
		}
	}
	versions, aliases, err := c.versionsAndAliases(r, arn)
	if err != nil {
		c.fail(w, r, arn, err)
		return
	}
	policies := c.policies(r, sm.StateMachineArn)
	status := http.StatusOK
	if f.Err != "" {
		status = http.StatusBadRequest
	}
	c.render(w, status, "machine", struct {
		page
		Machine    *service.DescribeStateMachineOutput
		Graph      *graph
		Definition string
		Executions []service.ExecutionListItem
		Next       string
		Filter     executionFilter
		Statuses   []string
		Versions   []service.StateMachineVersionListItem
		Aliases    []*service.DescribeStateMachineAliasOutput
		Policies   []policyView
		Warnings   map[string]int // by execution ARN
		Holds      []string       // the states held in every execution
		States     []string       // the states a hold can name
	}{c.newPage(r, sm.Name), sm, graphOf(m), prettyJSON(sm.Definition), list.Executions, list.NextToken, f, executionStatuses, versions, aliases, policies,
		c.warningCounts(r, list.Executions), c.machineHolds(r, sm.StateMachineArn), stateNames(graphOf(m))})
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

// executionFilter is what an executions list is filtered by: the query's
// status, prefix (of the name, in any case), from and to (the start
// between, in the zone tz, UTC by default) and next (the page's token).
type executionFilter struct {
	Status, Prefix, From, To, TZ, Next string
	// Err says what of the filter is wrong: the list is then empty.
	Err string
}

// Query is the filter's query string without the page's token, for the
// next page's link and the status links.
func (f executionFilter) Query() template.URL {
	v := url.Values{}
	for k, s := range map[string]string{"status": f.Status, "prefix": f.Prefix, "from": f.From, "to": f.To, "tz": f.TZ} {
		if s != "" && !(k == "tz" && s == "UTC") {
			v.Set(k, s)
		}
	}
	return template.URL(v.Encode()) // its values escaped by Encode
}

// WithStatus is the query of the same filter with another status.
func (f executionFilter) WithStatus(status string) template.URL {
	f.Status = status
	return f.Query()
}

// Any says whether the filter keeps fewer executions than all.
func (f executionFilter) Any() bool {
	return f.Status != "" || f.Prefix != "" || f.From != "" || f.To != ""
}

// searchExecutions reads a page of a state machine's executions (at most
// n) as the request's query filters them. A filter that is not right
// gives an empty list and the filter's Err.
func (c *Console) searchExecutions(r *http.Request, arn string, n int) (executionFilter, *service.ListExecutionsOutput, error) {
	q := r.URL.Query()
	f := executionFilter{Status: q.Get("status"), Prefix: strings.TrimSpace(q.Get("prefix")), From: strings.TrimSpace(q.Get("from")),
		To: strings.TrimSpace(q.Get("to")), TZ: strings.TrimSpace(q.Get("tz")), Next: q.Get("next")}
	empty := &service.ListExecutionsOutput{}
	lang := language(r)
	if f.TZ == "" {
		f.TZ = "UTC"
	}
	loc, err := time.LoadLocation(f.TZ)
	if err != nil {
		f.Err = translate(lang, "badTimeZone") + " " + f.TZ
		return f, empty, errors.New(f.Err)
	}
	in := &service.SearchExecutionsInput{StateMachineArn: arn, StatusFilter: f.Status, NamePrefix: f.Prefix, MaxResults: n}
	if f.From != "" {
		if in.StartedFrom, _, err = parseWhen(f.From, loc); err != nil {
			f.Err = translate(lang, "badFrom") + " " + err.Error()
			return f, empty, err
		}
	}
	if f.To != "" {
		t, span, err := parseWhen(f.To, loc)
		if err != nil {
			f.Err = translate(lang, "badTo") + " " + err.Error()
			return f, empty, err
		}
		// To the end of the day, minute or second written.
		if span == 24*time.Hour {
			in.StartedBefore = t.AddDate(0, 0, 1)
		} else {
			in.StartedBefore = t.Add(span)
		}
	}
	if !in.StartedFrom.IsZero() && !in.StartedBefore.IsZero() && !in.StartedFrom.Before(in.StartedBefore) {
		f.Err = translate(lang, "badWindow")
		return f, empty, errors.New(f.Err)
	}
	if f.Next != "" {
		in.NextToken = &f.Next
	}
	list, err := c.svc.SearchExecutions(r.Context(), in)
	var apiErr *sfnapi.Error
	if errors.As(err, &apiErr) && !strings.HasSuffix(apiErr.Code, "DoesNotExist") && apiErr.Code != "InvalidArn" {
		f.Err = apiErr.Message // a filter or a token the service refuses
	}
	if err != nil {
		return f, empty, err
	}
	return f, list, nil
}

// whenLayouts are the forms a filter's time may take, with what each
// spans: a date input's, a datetime-local input's (with or without
// seconds), and RFC 3339, whose zone is its own.
var whenLayouts = []struct {
	layout string
	span   time.Duration
}{
	{"2006-01-02", 24 * time.Hour},
	{"2006-01-02T15:04", time.Minute},
	{"2006-01-02 15:04", time.Minute},
	{"2006-01-02T15:04:05", time.Second},
	{"2006-01-02 15:04:05", time.Second},
}

// parseWhen reads a filter's time in loc: the time and how long the
// written time spans (a day, a minute, a second).
func parseWhen(s string, loc *time.Location) (time.Time, time.Duration, error) {
	for _, l := range whenLayouts {
		if t, err := time.ParseInLocation(l.layout, s, loc); err == nil {
			return t, l.span, nil
		}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, time.Millisecond, nil
	}
	return time.Time{}, 0, errors.New("\"" + s + "\" is not a date (2026-11-27) or a time (2026-11-27T09:30)")
}
