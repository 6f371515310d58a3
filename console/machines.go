package console

import (
	"errors"
	"net/http"
	"strings"

	"stepwise/asl"
	"stepwise/service"
	"stepwise/sfnapi"
)

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
