package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"stepwise/store"
	"stepwise/store/internal/aliasrouting"
	"stepwise/store/internal/sqlcore"
)

// What SQLite's versions and aliases do their own way (the rest is
// sqlcore's). The writer is one connection, so publishers, deletions and
// alias writers take turns without a lock.
const (
	// versionNextSQL hands out a state machine's next version number; no
	// row when there is no such state machine.
	versionNextSQL = `UPDATE stepwise_state_machine SET last_version = last_version + 1 WHERE arn = ? RETURNING last_version`

	versionInsertSQL = `INSERT INTO stepwise_version (` + sqlcore.VersionColumns + `) VALUES (?, ?, ?, ?, ?)`

	// aliasInsertSQL inserts nothing when there is no such state machine.
	aliasInsertSQL = `
INSERT INTO stepwise_alias (` + sqlcore.AliasColumns + `)
SELECT ?, ?, ?, ?, ?, ?
WHERE EXISTS (SELECT 1 FROM stepwise_state_machine WHERE arn = ?)`
)

// lockStateMachine does nothing: the one writer connection takes turns.
func lockStateMachine(context.Context, sqlcore.Querier, string) error { return nil }

// insertVersion takes the state machine's next number, then inserts v.
func insertVersion(ctx context.Context, q sqlcore.Querier, v *store.Version) (int64, error) {
	var number int64
	if err := q.QueryRow(ctx, versionNextSQL, v.StateMachineArn).Scan(&number); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("state machine %s: %w", v.StateMachineArn, err)
		}
		return 0, err
	}
	_, err := q.Exec(ctx, versionInsertSQL, v.StateMachineArn, number, v.RevisionID, v.Description, sqlcore.Millis(v.CreatedAt))
	return number, err
}

// insertAlias inserts the alias, then checks the routing's versions.
func insertAlias(ctx context.Context, q sqlcore.Querier, a *store.Alias) error {
	err := sqlcore.ExecOne(ctx, q, sql.ErrNoRows, aliasInsertSQL, a.StateMachineArn, a.Name, a.Description,
		aliasrouting.Encode(a.Routing), sqlcore.Millis(a.CreatedAt), sqlcore.Millis(a.UpdatedAt), a.StateMachineArn)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("state machine %s: %w", a.StateMachineArn, err)
	}
	if err != nil {
		return err
	}
	return sqlcore.VersionsExist(ctx, q, a.StateMachineArn, a.Routing)
}
