package service

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"stepwise/awsarn"
	"stepwise/history"
	"stepwise/jsonvalue"
	"stepwise/sfnapi"
	"stepwise/store"
)

// The map runs of distributed Map states: DescribeMapRun, ListMapRuns,
// UpdateMapRun, and ListExecutions of a map run's children. The engine
// runs them (engine/maprun); their rows hold what these show.

// mapRunArnInput checks a map run ARN given by a client:
// arn:…:mapRun:<state machine>/<label>:<id>.
func (s *Service) mapRunArnInput(text string) (local bool, err error) {
	v := newValidator()
	if v.required("mapRunArn", text) {
		v.length("mapRunArn", text, 1, 2000)
	}
	if err := v.err(); err != nil {
		return false, err
	}
	a, err := parseArn(text)
	if err != nil {
		return false, err
	}
	if a.Resource != awsarn.MapRun {
		return false, errInvalidArnResourceType(a.Resource)
	}
	if len(a.Parts) != 2 || !strings.Contains(a.Parts[0], "/") {
		return false, errInvalidArn(text)
	}
	return s.local(a), nil
}

// getMapRun returns the map run an ARN names, or ResourceNotFound.
func (s *Service) getMapRun(ctx context.Context, arn string) (*store.MapRun, error) {
	local, err := s.mapRunArnInput(arn)
	if err != nil {
		return nil, err
	}
	if !local {
		return nil, errResourceNotFound(arn)
	}
	m, err := s.db().MapRunGet(ctx, arn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errResourceNotFound(arn)
	}
	if err != nil {
		return nil, storeError("get map run", err)
	}
	return m, nil
}

// DescribeMapRun describes a map run: its settings and its children's
// progress.
func (s *Service) DescribeMapRun(ctx context.Context, in *DescribeMapRunInput) (*DescribeMapRunOutput, error) {
	m, err := s.getMapRun(ctx, in.MapRunArn)
	if err != nil {
		return nil, err
	}
	out := &DescribeMapRunOutput{
		MapRunArn: m.Arn, ExecutionArn: m.ExecutionArn, Status: m.Status, StartDate: history.EpochTime(m.StartDate),
		MaxConcurrency: m.MaxConcurrency, ToleratedFailurePercentage: m.ToleratedFailurePercentage,
		ToleratedFailureCount: m.ToleratedFailureCount, RedriveCount: m.RedriveCount,
		ItemCounts: json.RawMessage(m.ItemCounts), ExecutionCounts: json.RawMessage(m.ExecutionCounts),
	}
	if m.StopDate != nil {
		t := history.EpochTime(*m.StopDate)
		out.StopDate = &t
	}
	if m.RedriveDate != nil {
		t := history.EpochTime(*m.RedriveDate)
		out.RedriveDate = &t
	}
	return out, nil
}

// ListMapRuns lists the map runs an execution started, in the order they
// started.
func (s *Service) ListMapRuns(ctx context.Context, in *ListMapRunsInput) (*ListMapRunsOutput, error) {
	v := newValidator()
	if v.required("executionArn", in.ExecutionArn) {
		v.length("executionArn", in.ExecutionArn, 1, maxArnLength)
	}
	v.intRange("maxResults", in.MaxResults, 0, maxPageSize)
	if in.NextToken != nil {
		v.tokenLength("nextToken", *in.NextToken, maxTokenLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	ref, err := s.parseExecutionArn(in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	x, err := s.getExecution(ctx, ref)
	if err != nil {
		return nil, err
	}
	c, err := decodeToken(in.NextToken, cursorMapRuns, x.Arn)
	if err != nil {
		return nil, err
	}
	limit := pageSize(in.MaxResults)
	p := &store.MapRunListParams{ExecutionArn: x.Arn, Limit: limit + 1}
	if c != nil {
		p.AfterStartDate, p.AfterArn = fromMillis(c.Time), c.After
	}
	rows, err := s.db().MapRunList(ctx, p)
	if err != nil {
		return nil, storeError("list map runs", err)
	}
	out := &ListMapRunsOutput{MapRuns: []MapRunListItem{}}
	for i, m := range rows {
		if i == limit {
			last := rows[i-1]
			out.NextToken = encodeToken(cursor{Kind: cursorMapRuns, Scope: x.Arn, After: last.Arn, Time: millis(last.StartDate)})
			break
		}
		it := MapRunListItem{ExecutionArn: m.ExecutionArn, MapRunArn: m.Arn, StateMachineArn: m.StateMachineArn, StartDate: history.EpochTime(m.StartDate)}
		if m.StopDate != nil {
			t := history.EpochTime(*m.StopDate)
			it.StopDate = &t
		}
		out.MapRuns = append(out.MapRuns, it)
	}
	return out, nil
}

// UpdateMapRun changes a running map run's maximum concurrency and
// tolerated failures.
func (s *Service) UpdateMapRun(ctx context.Context, in *UpdateMapRunInput) (*UpdateMapRunOutput, error) {
	v := newValidator()
	if v.required("mapRunArn", in.MapRunArn) {
		v.length("mapRunArn", in.MapRunArn, 1, 2000)
	}
	v.intRange("maxConcurrency", in.MaxConcurrency, 0, math.MaxInt32)
	if p := in.ToleratedFailurePercentage; p != nil && *p < 0 {
		v.add(quoteValue(strconv.FormatFloat(*p, 'f', -1, 64)), "toleratedFailurePercentage", "Member must have value greater than or equal to 0.0")
	} else if p != nil && *p > 100 {
		v.add(quoteValue(strconv.FormatFloat(*p, 'f', -1, 64)), "toleratedFailurePercentage", "Member must have value less than or equal to 100.0")
	}
	if in.ToleratedFailureCount != nil && *in.ToleratedFailureCount < 0 {
		v.add(quoteValue(strconv.FormatInt(*in.ToleratedFailureCount, 10)), "toleratedFailureCount", "Member must have value greater than or equal to 0")
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if in.MaxConcurrency == nil && in.ToleratedFailurePercentage == nil && in.ToleratedFailureCount == nil {
		return nil, apiErr(sfnapi.CodeValidation, "At least one of maxConcurrency, toleratedFailurePercentage and toleratedFailureCount must be given")
	}
	m, err := s.getMapRun(ctx, in.MapRunArn)
	if err != nil {
		return nil, err
	}
	if m.Status != "RUNNING" {
		return nil, apiErr(sfnapi.CodeValidation, "Map Run is not RUNNING: '%s'", m.Arn)
	}
	if err := s.engine.UpdateMapRun(ctx, m.Arn, in.MaxConcurrency, in.ToleratedFailurePercentage, in.ToleratedFailureCount); err != nil {
		return nil, storeError("update map run", err)
	}
	return &UpdateMapRunOutput{}, nil
}

// listMapRunExecutions is ListExecutions of a map run's children.
func (s *Service) listMapRunExecutions(ctx context.Context, in *ListExecutionsInput) (*ListExecutionsOutput, error) {
	m, err := s.getMapRun(ctx, in.MapRunArn)
	if err != nil {
		return nil, err
	}
	scope := m.Arn + "|" + in.StatusFilter + "|" + in.RedriveFilter
	c, err := decodeToken(in.NextToken, cursorExecutions, scope)
	if err != nil {
		return nil, err
	}
	limit := pageSize(in.MaxResults)
	p := &store.ExecutionListParams{MapRunArn: m.Arn, Status: history.ExecutionStatus(in.StatusFilter), Limit: limit + 1}
	if c != nil {
		p.AfterStartDate, p.AfterArn = fromMillis(c.Time), c.After
	}
	return s.pageExecutions(ctx, p, limit, in.RedriveFilter, scope, func(x *store.Execution) ExecutionListItem {
		it := executionItem(x)
		it.MapRunArn = m.Arn
		return it
	})
}

// describeChildMachine is DescribeStateMachineForExecution of a map run's
// child: the state machine of the map run (<machine ARN>/<label>), whose
// definition is the Map's ItemProcessor in the revision the parent ran,
// with the map run and its label.
func (s *Service) describeChildMachine(ctx context.Context, x *store.Execution, included string) (*DescribeStateMachineForExecutionOutput, error) {
	base, labels, _ := strings.Cut(x.StateMachineArn, "/")
	rev, err := s.db().RevisionGet(ctx, base, x.RevisionID)
	if err != nil {
		return nil, storeError("get revision", err)
	}
	// A map run inside a child runs on <machine>/<outer>/<inner>.
	def, label := rev.Definition, labels
	for _, l := range strings.Split(labels, "/") {
		def, label = processorDefinition(def, l), l
	}
	out := &DescribeStateMachineForExecutionOutput{
		StateMachineArn: x.StateMachineArn, Name: awsarn.StateMachineName(x.StateMachineArn), Definition: def,
		RoleArn: rev.RoleArn, UpdateDate: history.EpochTime(rev.CreatedAt), MapRunArn: x.MapRunArn, Label: label,
		LoggingConfiguration: defaultLogging(), TracingConfiguration: defaultTracing(), EncryptionConfiguration: defaultEncryption(),
		VariableReferences: variableReferencesOf(def),
	}
	if included == includedMetadataOnly {
		out.Definition = ""
	}
	return out, nil
}

// processorDefinition is the ItemProcessor of the distributed Map
// labelled label in a definition, as a state machine definition of its
// own (without its ProcessorConfig, in the query language it inherits);
// "" when there is none.
func processorDefinition(def, label string) string {
	v, err := jsonvalue.ParseString(def)
	if err != nil {
		return ""
	}
	top, _ := v.(*jsonvalue.Object)
	lang, _ := top.Get("QueryLanguage")
	var find func(m *jsonvalue.Object, lang any) *jsonvalue.Object
	find = func(m *jsonvalue.Object, lang any) *jsonvalue.Object {
		if l, ok := m.Get("QueryLanguage"); ok {
			lang = l
		}
		states, _ := m.Get("States")
		so, _ := states.(*jsonvalue.Object)
		if so == nil {
			return nil
		}
		for name, sv := range so.All() {
			st, _ := sv.(*jsonvalue.Object)
			if st == nil {
				continue
			}
			var subs []*jsonvalue.Object
			if p, ok := st.Get("ItemProcessor"); ok {
				po, _ := p.(*jsonvalue.Object)
				if po == nil {
					continue
				}
				l := name
				if lv, ok := st.Get("Label"); ok {
					l, _ = lv.(string)
				}
				if l == label {
					out := jsonvalue.NewObject(po.Len() + 1)
					if lang != nil {
						out.Set("QueryLanguage", lang)
					}
					for k, v := range po.All() {
						if k != "ProcessorConfig" {
							out.Set(k, v)
						}
					}
					return out
				}
				subs = append(subs, po)
			}
			if b, ok := st.Get("Branches"); ok {
				arr, _ := b.([]any)
				for _, x := range arr {
					if bo, ok := x.(*jsonvalue.Object); ok {
						subs = append(subs, bo)
					}
				}
			}
			for _, sub := range subs {
				if found := find(sub, lang); found != nil {
					return found
				}
			}
		}
		return nil
	}
	if top == nil {
		return ""
	}
	p := find(top, lang)
	if p == nil {
		return ""
	}
	return jsonvalue.String(p)
}

// DescribeMapRunInput is the request of DescribeMapRun.
type DescribeMapRunInput struct {
	MapRunArn string `json:"mapRunArn"`
}

// DescribeMapRunOutput is the response of DescribeMapRun.
type DescribeMapRunOutput struct {
	MapRunArn                  string             `json:"mapRunArn"`
	ExecutionArn               string             `json:"executionArn"`
	Status                     string             `json:"status"`
	StartDate                  history.EpochTime  `json:"startDate"`
	StopDate                   *history.EpochTime `json:"stopDate,omitempty"`
	MaxConcurrency             int                `json:"maxConcurrency"`
	ToleratedFailurePercentage float64            `json:"toleratedFailurePercentage"`
	ToleratedFailureCount      int64              `json:"toleratedFailureCount"`
	ItemCounts                 json.RawMessage    `json:"itemCounts"`
	ExecutionCounts            json.RawMessage    `json:"executionCounts"`
	RedriveCount               int                `json:"redriveCount"`
	RedriveDate                *history.EpochTime `json:"redriveDate,omitempty"`
}

// ListMapRunsInput is the request of ListMapRuns.
type ListMapRunsInput struct {
	ExecutionArn string  `json:"executionArn"`
	MaxResults   *int    `json:"maxResults,omitempty"`
	NextToken    *string `json:"nextToken,omitempty"`
}

// MapRunListItem is one map run in a list.
type MapRunListItem struct {
	ExecutionArn    string             `json:"executionArn"`
	MapRunArn       string             `json:"mapRunArn"`
	StateMachineArn string             `json:"stateMachineArn"`
	StartDate       history.EpochTime  `json:"startDate"`
	StopDate        *history.EpochTime `json:"stopDate,omitempty"`
}

// ListMapRunsOutput is the response of ListMapRuns.
type ListMapRunsOutput struct {
	MapRuns   []MapRunListItem `json:"mapRuns"`
	NextToken string           `json:"nextToken,omitempty"`
}

// UpdateMapRunInput is the request of UpdateMapRun.
type UpdateMapRunInput struct {
	MapRunArn                  string   `json:"mapRunArn"`
	MaxConcurrency             *int     `json:"maxConcurrency,omitempty"`
	ToleratedFailurePercentage *float64 `json:"toleratedFailurePercentage,omitempty"`
	ToleratedFailureCount      *int64   `json:"toleratedFailureCount,omitempty"`
}

// UpdateMapRunOutput is the (empty) response of UpdateMapRun.
type UpdateMapRunOutput struct{}
