package service

import (
	"context"
	"strconv"
	"strings"
	"time"

	"stepwise/history"
	"stepwise/store"
)

// SearchExecutionsInput selects a state machine's executions for the
// console: ListExecutions' status filter, and a name prefix and a start
// window that AWS's ListExecutions does not have.
type SearchExecutionsInput struct {
	StateMachineArn string // a state machine's, a version's or an alias's
	StatusFilter    string // "" for all
	// NamePrefix keeps the executions whose name starts with it, in any
	// case.
	NamePrefix string
	// StartedFrom and StartedBefore, when set, keep the executions
	// started at or after StartedFrom and before StartedBefore.
	StartedFrom, StartedBefore time.Time
	MaxResults                 int // 0 for the default (100)
	NextToken                  *string
}

// searchScan is how many executions one SearchExecutions reads at the
// most: past it, the page ends with a token even if it is not full, so a
// rare name prefix never makes a page read a whole long history.
var searchScan = 5000

// SearchExecutions lists a state machine's executions, newest first, that
// the input's filters keep: one store query from StartedBefore down,
// which ends at StartedFrom.
func (s *Service) SearchExecutions(ctx context.Context, in *SearchExecutionsInput) (*ListExecutionsOutput, error) {
	v := newValidator()
	if v.required("stateMachineArn", in.StateMachineArn) {
		v.length("stateMachineArn", in.StateMachineArn, 1, maxArnLength)
	}
	v.enum("statusFilter", in.StatusFilter, executionStatuses...)
	v.intRange("maxResults", &in.MaxResults, 0, maxPageSize)
	if in.NextToken != nil {
		v.tokenLength("nextToken", *in.NextToken, maxExecutionsTokenLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	sm, versionArn, aliasArn, err := s.listTarget(ctx, in.StateMachineArn)
	if err != nil {
		return nil, err
	}
	if sm.Type != typeStandard {
		return nil, errTypeNotSupported()
	}
	prefix := strings.ToLower(in.NamePrefix)
	scope := strings.Join([]string{"search", in.StateMachineArn, in.StatusFilter, prefix,
		strconv.FormatInt(millisOrZero(in.StartedFrom), 10), strconv.FormatInt(millisOrZero(in.StartedBefore), 10)}, "|")
	c, err := decodeToken(in.NextToken, cursorExecutions, scope)
	if err != nil {
		return nil, err
	}
	limit := pageSize(&in.MaxResults)
	p := &store.ExecutionListParams{StateMachineArn: sm.Arn, VersionArn: versionArn, AliasArn: aliasArn,
		Status: history.ExecutionStatus(in.StatusFilter), Limit: min(1000, max(limit+1, 100))}
	switch {
	case c != nil:
		p.AfterStartDate, p.AfterArn = fromMillis(c.Time), c.After
	case !in.StartedBefore.IsZero():
		// From StartedBefore down; those started at StartedBefore that
		// the cursor lets through are skipped below.
		p.AfterStartDate, p.AfterArn = in.StartedBefore, "arn:"
	}
	out := &ListExecutionsOutput{Executions: []ExecutionListItem{}}
	var last *store.Execution
	scanned := 0
	for {
		rows, err := s.db().ExecutionList(ctx, p)
		if err != nil {
			return nil, storeError("list executions", err)
		}
		for _, x := range rows {
			if !in.StartedFrom.IsZero() && x.StartDate.Before(in.StartedFrom) {
				return out, nil // newest first: the rest started earlier still
			}
			if len(out.Executions) == limit || scanned == searchScan {
				out.NextToken = encodeToken(cursor{Kind: cursorExecutions, Scope: scope, After: last.Arn, Time: millis(last.StartDate)})
				return out, nil
			}
			scanned++
			last = x
			if !in.StartedBefore.IsZero() && !x.StartDate.Before(in.StartedBefore) {
				continue
			}
			if strings.HasPrefix(strings.ToLower(x.Name), prefix) {
				out.Executions = append(out.Executions, executionItem(x))
			}
		}
		if len(rows) < p.Limit {
			return out, nil
		}
		p.AfterStartDate, p.AfterArn = last.StartDate, last.Arn
	}
}

func millisOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return millis(t)
}

// listTarget is the state machine a list of executions is of, and the
// version or alias that narrows it (a version's or an alias's ARN).
func (s *Service) listTarget(ctx context.Context, arn string) (sm *store.StateMachine, versionArn, aliasArn string, err error) {
	ref, err := s.parseStateMachineArn(arn)
	if err != nil {
		return nil, "", "", err
	}
	switch _, isVersion := versionNumber(ref.qualifier); {
	case ref.qualifier == "":
		sm, err = s.getStateMachine(ctx, ref)
	case isVersion:
		var ver *store.Version
		sm, ver, err = s.getVersion(ctx, ref)
		if ver != nil {
			versionArn = ver.Arn()
		}
	default:
		var a *store.Alias
		if a, err = s.getAlias(ctx, ref); err == nil {
			aliasArn = a.Arn()
			sm, err = s.getStateMachine(ctx, &stateMachineRef{arn: a.StateMachineArn, name: ref.name, local: true})
		}
	}
	if err != nil {
		return nil, "", "", err
	}
	return sm, versionArn, aliasArn, nil
}
