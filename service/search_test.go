package service_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/service"
)

// searchAll follows a search's tokens to its end: the names, in order.
func searchAll(t *testing.T, b *testBundle, in service.SearchExecutionsInput) (names []string, pages int) {
	t.Helper()
	for {
		out, err := b.svc.SearchExecutions(b.ctx, &in)
		require.NoError(t, err)
		pages++
		for _, x := range out.Executions {
			names = append(names, x.Name)
		}
		if out.NextToken == "" {
			return names, pages
		}
		in.NextToken = &out.NextToken
	}
}

func runs(from, to int) []string {
	var out []string
	for i := to; i >= from; i-- {
		out = append(out, fmt.Sprintf("run-%02d", i))
	}
	return out
}

// The start window: from included, before excluded, newest first,
// paged; a name prefix in any case; a token is refused under another
// filter.
func TestSearchExecutions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "sm", passDefinition)
	starts := map[string]time.Time{}
	for i := range 30 {
		arn := b.start(t, sm, fmt.Sprintf("run-%02d", i), `{}`)
		x, err := b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: arn})
		require.NoError(t, err)
		starts[x.Name] = time.Time(x.StartDate)
	}
	b.start(t, sm, "other", `{}`)

	names, pages := searchAll(t, b, service.SearchExecutionsInput{StateMachineArn: sm, StartedFrom: starts["run-10"], StartedBefore: starts["run-20"], MaxResults: 4})
	require.Equal(t, runs(10, 19), names)
	require.Equal(t, 3, pages)

	names, _ = searchAll(t, b, service.SearchExecutionsInput{StateMachineArn: sm, NamePrefix: "RUN-2"})
	require.Equal(t, runs(20, 29), names)
	names, _ = searchAll(t, b, service.SearchExecutionsInput{StateMachineArn: sm, NamePrefix: "run-0", StartedBefore: starts["run-05"]})
	require.Equal(t, runs(0, 4), names)
	names, _ = searchAll(t, b, service.SearchExecutionsInput{StateMachineArn: sm, StatusFilter: "SUCCEEDED"})
	require.Empty(t, names)

	out, err := b.svc.SearchExecutions(b.ctx, &service.SearchExecutionsInput{StateMachineArn: sm, MaxResults: 2})
	require.NoError(t, err)
	require.NotEmpty(t, out.NextToken)
	_, err = b.svc.SearchExecutions(b.ctx, &service.SearchExecutionsInput{StateMachineArn: sm, MaxResults: 2, NamePrefix: "run", NextToken: &out.NextToken})
	requireAPIError(t, err, "InvalidToken", "Invalid Token: 'Invalid token: it belongs to another resource'")
	_, err = b.svc.SearchExecutions(b.ctx, &service.SearchExecutionsInput{StateMachineArn: sm, StatusFilter: "NOPE"})
	requireAPIError(t, err, "ValidationException", "")
	_, err = b.svc.SearchExecutions(b.ctx, &service.SearchExecutionsInput{StateMachineArn: sm + "-gone"})
	requireAPIError(t, err, "StateMachineDoesNotExist", "")
}

// A search reads a bounded number of executions per call: a rare prefix
// ends pages early, with a token, and the tokens reach every match.
func TestSearchExecutionsScansABoundedPage(t *testing.T) {
	defer service.SetSearchScan(5)()
	b := setup(t)
	sm := b.create(t, "sm", passDefinition)
	for i := range 30 {
		b.start(t, sm, fmt.Sprintf("run-%02d", i), `{}`)
	}
	out, err := b.svc.SearchExecutions(b.ctx, &service.SearchExecutionsInput{StateMachineArn: sm, NamePrefix: "run-1"})
	require.NoError(t, err)
	require.Empty(t, out.Executions, "the 5 newest do not match")
	require.NotEmpty(t, out.NextToken)
	names, pages := searchAll(t, b, service.SearchExecutionsInput{StateMachineArn: sm, NamePrefix: "run-1"})
	require.Equal(t, runs(10, 19), names)
	require.GreaterOrEqual(t, pages, 6, "30 executions read, 5 at a time")
}
