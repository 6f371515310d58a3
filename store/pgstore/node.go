package pgstore

// nowMS is the database's clock in Unix milliseconds: leases are timed by
// it, so the nodes' clocks need not agree.
const nowMS = `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`

// The statements of fenced steps and of claims; the leases' are sqlcore's.
const (
	// nodeLeaseSQL says whether a node's lease is live: a node inserts
	// executions only while it is.
	nodeLeaseSQL = `SELECT EXISTS (SELECT 1 FROM stepwise_node WHERE id = $1 AND epoch = $2 AND expires_at > ` + nowMS + `)`
	// claimLockSQL is Dialect.ClaimLockSQL: one advisory lock, held to
	// the end of the claim's transaction.
	claimLockSQL = `SELECT pg_advisory_xact_lock(7363746570)`

	// executionClaimSQL is Dialect.ExecutionClaimSQL. Rows another
	// claimer holds are skipped. The condition is checked
	// again on the row as it is once locked (noLiveOwner, a subquery):
	// a row a concurrent claim took meanwhile has a live owner now,
	// which the join of the first pick, re-read with the node row it
	// found then, would not see.
	executionClaimSQL = `
WITH picked AS (
    SELECT e.id FROM stepwise_execution AS e LEFT JOIN stepwise_node AS n ON n.id = e.owner
    WHERE e.status = 'RUNNING'
      AND (e.owner IS NULL OR n.id IS NULL OR n.expires_at <= ` + nowMS + ` OR n.epoch <> e.owner_epoch)
    LIMIT $3
    FOR UPDATE OF e SKIP LOCKED
)
UPDATE stepwise_execution AS e SET owner = $1, owner_epoch = $2, version = version + 1
WHERE e.id IN (SELECT id FROM picked) AND e.status = 'RUNNING' AND ` + noLiveOwner + `
RETURNING arn`
	noLiveOwner = `NOT EXISTS (SELECT 1 FROM stepwise_node AS o WHERE o.id = e.owner AND o.epoch = e.owner_epoch AND o.expires_at > ` + nowMS + `)`

	// stepFenceSQL reads (and holds against claims until the commit) the
	// owners of fenced steps' executions.
	// The owner's lease must be live too: a node whose lease ran out
	// writes nothing more, even before another claims its executions.
	stepFenceSQL = `SELECT e.arn, e.owner, e.owner_epoch, coalesce(n.expires_at > ` + nowMS + `, false)
FROM stepwise_execution AS e LEFT JOIN stepwise_node AS n ON n.id = e.owner AND n.epoch = e.owner_epoch
WHERE e.arn = ANY ($1::text[]) FOR SHARE OF e`
)
