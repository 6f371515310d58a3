package sdkjob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"stepwise/integration"
	"stepwise/jsonvalue"
)

// StartToken names the start of a task's job: the same each time the
// task is dispatched (again after a restart, or on the node that took its
// execution over), another for every other task, a retry's included. A
// start carries it (as the service's idempotency token, or where the
// service has none as a member of the job that a lookup finds again), so
// that a task whose start was made but not recorded before a crash does
// not start a second job. It is 49 characters of [a-z0-9-]; "" for a
// call made outside a durable execution (TestState, a synchronous
// Express run, whose ids start again with every process), which is never
// dispatched again.
func StartToken(r *integration.Request) string {
	if r.ExecutionArn == "" || r.TaskID == "" || r.ExecutionStart.IsZero() {
		return ""
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d", r.ExecutionArn, r.TaskID, r.ExecutionStart.UnixMilli()))
	return "stepwise-" + hex.EncodeToString(sum[:20])
}

// MaxLookupPages bounds the pages of a job's runs that a lookup reads
// (newest first): a run started before a crash is among the latest.
const MaxLookupPages = 5

// Pager is an AWS SDK for Go paginator: its pages of P, with the
// service's options O.
type Pager[P, O any] interface {
	HasMorePages() bool
	NextPage(ctx context.Context, optFns ...func(*O)) (P, error)
}

// Lookup reads at most MaxLookupPages pages and returns what look finds
// in the first page it finds anything in (nil when none has it); a page
// that cannot be read is fail's failure.
func Lookup[P, O any](ctx context.Context, pages Pager[P, O], fail func(error) error, look func(P) (*jsonvalue.Object, error)) (*jsonvalue.Object, error) {
	for n := 0; pages.HasMorePages() && n < MaxLookupPages; n++ {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fail(err)
		}
		if found, err := look(page); found != nil || err != nil {
			return found, err
		}
	}
	return nil, nil
}

// LookFirst says a task's job may have been started by an earlier
// dispatch whose answer was not recorded: the task is dispatched again
// after a restart or a takeover, with no start recorded. A module whose
// service has no idempotency token looks for the job carrying the task's
// StartToken before it starts one.
func LookFirst(r *integration.Request) bool {
	return r.Resumed && r.Submitted == nil && StartToken(r) != ""
}
