package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"stepwise/store"
	"stepwise/store/internal/aliasrouting"
	"stepwise/store/internal/sqlcore"
)

// What PostgreSQL's versions and aliases do their own way (the rest is
// sqlcore's): a row lock on the state machine, whose publishers,
// deletions and alias writers take turns.
const (
	// versionLockSQL locks a state machine's row for a publisher: the
	// publishers of one state machine take turns, and a deletion waits
	// for them (and they for it). No row when there is no such state
	// machine.
	versionLockSQL = `SELECT 1 FROM stepwise_state_machine WHERE arn = $1 FOR NO KEY UPDATE`

	// versionInsertSQL hands out the state machine's next number to the
	// new version.
	versionInsertSQL = `
WITH next AS (
    UPDATE stepwise_state_machine SET last_version = last_version + 1 WHERE arn = $1
    RETURNING last_version
)
INSERT INTO stepwise_version (` + sqlcore.VersionColumns + `)
SELECT $1, last_version, $2, $3, $4 FROM next
RETURNING number`

	// aliasInsertSQL inserts nothing when there is no such state machine.
	// The row's lock keeps a deletion of the state machine from missing
	// the new alias.
	aliasInsertSQL = `
INSERT INTO stepwise_alias (` + sqlcore.AliasColumns + `)
SELECT $1, $2, $3, $4, $5, $6 FROM stepwise_state_machine WHERE arn = $1 FOR KEY SHARE`
)

// lockStateMachine holds a state machine's row (see versionLockSQL);
// pgx.ErrNoRows when there is no such state machine.
func lockStateMachine(ctx context.Context, q sqlcore.Querier, stateMachineArn string) error {
	var one int
	err := q.QueryRow(ctx, versionLockSQL, stateMachineArn).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("state machine %s: %w", stateMachineArn, err)
	}
	return err
}

// insertVersion inserts v with the state machine's next number, in one
// statement.
func insertVersion(ctx context.Context, q sqlcore.Querier, v *store.Version) (int64, error) {
	var number int64
	err := q.QueryRow(ctx, versionInsertSQL, v.StateMachineArn, v.RevisionID, v.Description, sqlcore.Millis(v.CreatedAt)).Scan(&number)
	return number, err
}

// insertAlias checks the routing's versions, then inserts the alias under
// the state machine's lock.
func insertAlias(ctx context.Context, q sqlcore.Querier, a *store.Alias) error {
	if err := sqlcore.VersionsExist(ctx, q, a.StateMachineArn, a.Routing); err != nil {
		return err
	}
	err := sqlcore.ExecOne(ctx, q, pgx.ErrNoRows, aliasInsertSQL, a.StateMachineArn, a.Name, a.Description,
		aliasrouting.Encode(a.Routing), sqlcore.Millis(a.CreatedAt), sqlcore.Millis(a.UpdatedAt))
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("state machine %s: %w", a.StateMachineArn, err)
	}
	return err
}
