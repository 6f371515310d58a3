package start_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/pgtest"
	"stepwise/internal/testkit/slowtest"
	"stepwise/service"
	"stepwise/service/servicetest"
	"stepwise/sfnapi"
	"stepwise/store/pgstore"
)

// TestExclusiveRefuse: state machines tagged stepwise:exclusive=<group>:refuse
// run one at a time: a start while an execution of the group runs is
// refused with ExecutionLimitExceeded naming it, by this server and by
// another over the same store (a restart, another node); once it has
// ended the next starts. A state machine outside the group is not held;
// a repeated start of the running execution is answered as before; two
// starts at once on two servers start one; a tag that is not right is
// refused.
func TestExclusiveRefuse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other, err := service.New(b.drv, servicetest.StoreEngine(b.drv, nil), service.Config{Region: region, Account: account})
	require.NoError(t, err)
	exclusiveRefuse(t, b.svc, other)
}

// TestExclusiveRefusePostgres: the same on PostgreSQL, the two servers
// each with a pool of its own, as two nodes of a cluster.
func TestExclusiveRefusePostgres(t *testing.T) {
	t.Parallel()
	slowtest.Require(t, "runs PostgreSQL")
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	var svcs []*service.Service
	for range 2 {
		drv, err := pgstore.Open(ctx, url, pgstore.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { drv.Close() })
		svc, err := service.New(drv, servicetest.StoreEngine(drv, nil), service.Config{Region: region, Account: account})
		require.NoError(t, err)
		svcs = append(svcs, svc)
	}
	exclusiveRefuse(t, svcs[0], svcs[1])
}

func exclusiveRefuse(t *testing.T, first, other *service.Service) {
	ctx := context.Background()
	b := struct{ svc *service.Service }{first}
	tag := []service.Tag{{Key: ptr("stepwise:exclusive"), Value: ptr("nightly:refuse")}}
	for _, name := range []string{"a", "b", "c"} {
		in := &service.CreateStateMachineInput{Name: name, Definition: def, RoleArn: "arn:aws:iam::123456789012:role/r"}
		if name != "c" {
			in.Tags = tag
		}
		_, err := b.svc.CreateStateMachine(ctx, in)
		require.NoError(t, err)
	}
	startOn := func(svc *service.Service, sm, name string) (string, error) {
		out, err := svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: prefix + "stateMachine:" + sm, Name: &name})
		if err != nil {
			return "", err
		}
		return out.ExecutionArn, nil
	}
	refused := func(err error, running string) {
		t.Helper()
		var se *sfnapi.Error
		require.True(t, errors.As(err, &se), "%v", err)
		require.Equal(t, sfnapi.CodeExecutionLimitExceeded, se.Code)
		require.Contains(t, se.Message, `the exclusive group "nightly" (tag stepwise:exclusive) has the execution `+running+" running")
	}
	stop := func(arn string) {
		t.Helper()
		_, err := b.svc.StopExecution(ctx, &service.StopExecutionInput{ExecutionArn: arn})
		require.NoError(t, err)
	}

	a1, err := startOn(b.svc, "a", "a1")
	require.NoError(t, err)
	_, err = startOn(b.svc, "b", "b1")
	refused(err, a1)
	_, err = startOn(other, "b", "b1") // another server over the store: no memory of its own
	refused(err, a1)
	_, err = startOn(b.svc, "c", "c1")
	require.NoError(t, err, "outside the group")
	again, err := startOn(other, "a", "a1")
	require.NoError(t, err, "the running execution started again: answered as StartExecution answers it")
	require.Equal(t, a1, again)

	stop(a1)
	b1, err := startOn(other, "b", "b1")
	require.NoError(t, err)
	_, err = startOn(b.svc, "a", "a2")
	refused(err, b1)
	stop(b1)

	// Starts at once on the two servers: one starts, the others are refused.
	for round := range 5 {
		var wg sync.WaitGroup
		arns := make([]string, 4)
		errs := make([]error, 4)
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				svc := b.svc
				if i%2 == 1 {
					svc = other
				}
				arns[i], errs[i] = startOn(svc, []string{"a", "b"}[i/2], "race-"+string(rune('0'+round))+"-"+string(rune('0'+i)))
			}()
		}
		wg.Wait()
		started := 0
		for i, err := range errs {
			if err == nil {
				started++
				stop(arns[i])
			} else {
				var se *sfnapi.Error
				require.True(t, errors.As(err, &se), "%v", err)
				require.Equal(t, sfnapi.CodeExecutionLimitExceeded, se.Code)
			}
		}
		require.Equal(t, 1, started, "round %d", round)
	}

	_, err = b.svc.TagResource(ctx, &service.TagResourceInput{ResourceArn: prefix + "stateMachine:c",
		Tags: []service.Tag{{Key: ptr("stepwise:exclusive"), Value: ptr("nightly:later")}}})
	var se *sfnapi.Error
	require.True(t, errors.As(err, &se), "%v", err)
	require.Equal(t, sfnapi.CodeValidation, se.Code)
	require.Contains(t, se.Message, "write <group> (a start while another execution of the group runs waits for it) or <group>:refuse")
}
