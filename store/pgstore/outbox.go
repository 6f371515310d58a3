package pgstore

// The outbox row StepWrite writes; the outbox's reads are sqlcore's.
const (
	// outboxLockSQL serializes the writers of outbox rows from their
	// insert to their commit, so that ids become visible in order (see
	// the package doc).
	outboxLockSQL   = `SELECT pg_advisory_xact_lock($1)`
	outboxInsertSQL = `INSERT INTO stepwise_outbox (created_at, notices, body) VALUES ($1, $2, $3) RETURNING id`
)
