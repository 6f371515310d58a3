package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"stepwise/store"
	"stepwise/store/internal/aliasrouting"
	"stepwise/store/internal/sqlcore"
)

const (
	versionColumns = `state_machine_arn, number, revision_id, description, created_at`

	versionGetSQL = `SELECT ` + versionColumns + ` FROM stepwise_version WHERE state_machine_arn = $1 AND number = $2`

	// versionLockSQL locks a state machine's row for a publisher: the
	// publishers of one state machine take turns, and a deletion waits
	// for them (and they for it). No row when there is no such state
	// machine.
	versionLockSQL = `SELECT 1 FROM stepwise_state_machine WHERE arn = $1 FOR NO KEY UPDATE`

	versionOfRevisionSQL = `SELECT ` + versionColumns + ` FROM stepwise_version WHERE state_machine_arn = $1 AND revision_id = $2`

	// versionInsertSQL hands out the state machine's next number to the
	// new version.
	versionInsertSQL = `
WITH next AS (
    UPDATE stepwise_state_machine SET last_version = last_version + 1 WHERE arn = $1
    RETURNING last_version
)
INSERT INTO stepwise_version (` + versionColumns + `)
SELECT $1, last_version, $2, $3, $4 FROM next
RETURNING number`

	versionListSQL = `SELECT ` + versionColumns + `
FROM stepwise_version
WHERE state_machine_arn = $1 AND number < $2
ORDER BY number DESC
LIMIT $3`

	versionDeleteSQL = `DELETE FROM stepwise_version WHERE state_machine_arn = $1 AND number = $2`

	aliasColumns = `state_machine_arn, name, description, routing, created_at, updated_at`

	// aliasInsertSQL inserts nothing when there is no such state machine.
	// The row's lock keeps a deletion of the state machine from missing
	// the new alias.
	aliasInsertSQL = `
INSERT INTO stepwise_alias (` + aliasColumns + `)
SELECT $1, $2, $3, $4, $5, $6 FROM stepwise_state_machine WHERE arn = $1 FOR KEY SHARE`

	aliasGetSQL = `SELECT ` + aliasColumns + ` FROM stepwise_alias WHERE state_machine_arn = $1 AND name = $2`

	aliasRoutingsSQL = `SELECT name, routing FROM stepwise_alias WHERE state_machine_arn = $1 ORDER BY name`

	versionExistsSQL = `SELECT EXISTS (SELECT 1 FROM stepwise_version WHERE state_machine_arn = $1 AND number = $2)`

	aliasUpdateSQL = `
UPDATE stepwise_alias SET description = $1, routing = $2, updated_at = $3
WHERE state_machine_arn = $4 AND name = $5`

	aliasDeleteSQL = `DELETE FROM stepwise_alias WHERE state_machine_arn = $1 AND name = $2`

	aliasListSQL = `SELECT ` + aliasColumns + `
FROM stepwise_alias
WHERE state_machine_arn = $1 AND name > $2
ORDER BY name
LIMIT $3`
)

func scanVersion(s pgx.Row) (*store.Version, error) {
	var v store.Version
	var created int64
	if err := s.Scan(&v.StateMachineArn, &v.Number, &v.RevisionID, &v.Description, &created); err != nil {
		return nil, err
	}
	v.CreatedAt = sqlcore.FromMillis(created)
	return &v, nil
}

func scanAlias(s pgx.Row) (*store.Alias, error) {
	var a store.Alias
	var routing string
	var created, updated int64
	if err := s.Scan(&a.StateMachineArn, &a.Name, &a.Description, &routing, &created, &updated); err != nil {
		return nil, err
	}
	var err error
	if a.Routing, err = aliasrouting.Decode(routing); err != nil {
		return nil, err
	}
	a.CreatedAt, a.UpdatedAt = sqlcore.FromMillis(created), sqlcore.FromMillis(updated)
	return &a, nil
}

// VersionPublish publishes v.RevisionID as the state machine's next
// version, or returns the version that has it already. It holds the
// state machine's row from the start: a concurrent publisher of the same
// revision waits, then finds the version the first one made (each
// statement of a READ COMMITTED transaction sees what was committed
// before it began).
func (e *Executor) VersionPublish(ctx context.Context, v *store.Version) (*store.Version, bool, error) {
	var out *store.Version
	created := false
	err := e.inTx(ctx, func(q querier) error {
		var one int
		if err := q.QueryRow(ctx, versionLockSQL, v.StateMachineArn).Scan(&one); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("state machine %s: %w", v.StateMachineArn, err)
			}
			return err
		}
		existing, err := scanVersion(q.QueryRow(ctx, versionOfRevisionSQL, v.StateMachineArn, v.RevisionID))
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var number int64
		if err := q.QueryRow(ctx, versionInsertSQL, v.StateMachineArn, v.RevisionID, v.Description, sqlcore.Millis(v.CreatedAt)).Scan(&number); err != nil {
			return err
		}
		out = &store.Version{StateMachineArn: v.StateMachineArn, Number: number, RevisionID: v.RevisionID,
			Description: v.Description, CreatedAt: sqlcore.Truncate(v.CreatedAt)}
		created = true
		return nil
	})
	if err != nil {
		return nil, false, interpretError(fmt.Sprintf("publish revision %s of %s", v.RevisionID, v.StateMachineArn), err)
	}
	return out, created, nil
}

// VersionGet returns a version.
func (e *Executor) VersionGet(ctx context.Context, stateMachineArn string, number int64) (*store.Version, error) {
	v, err := scanVersion(e.q().QueryRow(ctx, versionGetSQL, stateMachineArn, number))
	if err != nil {
		return nil, interpretError(fmt.Sprintf("get version %d of %s", number, stateMachineArn), err)
	}
	return v, nil
}

// VersionList lists a state machine's versions numbered below before (0:
// all), newest first.
func (e *Executor) VersionList(ctx context.Context, stateMachineArn string, before int64, limitN int) ([]*store.Version, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	vs, err := queryAll(ctx, e.q(), versionListSQL, []any{stateMachineArn, before, limit(limitN)}, scanVersion)
	if err != nil {
		return nil, interpretError("list versions of "+stateMachineArn, err)
	}
	return vs, nil
}

// lockVersions holds a state machine's row (see versionLockSQL), so that
// a version's deletion and an alias's creation or update take turns;
// pgx.ErrNoRows when there is no such state machine.
func lockVersions(ctx context.Context, q querier, stateMachineArn string) error {
	var one int
	err := q.QueryRow(ctx, versionLockSQL, stateMachineArn).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("state machine %s: %w", stateMachineArn, err)
	}
	return err
}

// VersionDelete deletes a version no alias routes to, checked under the
// state machine's lock.
func (e *Executor) VersionDelete(ctx context.Context, stateMachineArn string, number int64) error {
	err := e.inTx(ctx, func(q querier) error {
		if err := lockVersions(ctx, q, stateMachineArn); err != nil {
			return err
		}
		aliases, err := queryAll(ctx, q, aliasRoutingsSQL, []any{stateMachineArn}, scanNamedRouting)
		if err != nil {
			return err
		}
		if err := aliasrouting.InUse(aliases, number); err != nil {
			return err
		}
		return execOne(ctx, q, versionDeleteSQL, stateMachineArn, number)
	})
	return interpretError(fmt.Sprintf("delete version %d of %s", number, stateMachineArn), err)
}

func scanNamedRouting(s pgx.Row) (aliasrouting.Named, error) {
	var a aliasrouting.Named
	err := s.Scan(&a.Name, &a.Routing)
	return a, err
}

// versionsExist reports whether the versions of a routing exist, in q.
func versionsExist(ctx context.Context, q querier, stateMachineArn string, routes []store.AliasRoute) error {
	return aliasrouting.Missing(routes, func(n int64) (bool, error) {
		var ok bool
		err := q.QueryRow(ctx, versionExistsSQL, stateMachineArn, n).Scan(&ok)
		return ok, err
	})
}

// AliasInsert creates an alias of an existing state machine, routing to
// versions that exist, under the state machine's lock.
func (e *Executor) AliasInsert(ctx context.Context, a *store.Alias) error {
	err := e.inTx(ctx, func(q querier) error {
		if err := lockVersions(ctx, q, a.StateMachineArn); err != nil {
			return err
		}
		if err := versionsExist(ctx, q, a.StateMachineArn, a.Routing); err != nil {
			return err
		}
		err := execOne(ctx, q, aliasInsertSQL, a.StateMachineArn, a.Name, a.Description,
			aliasrouting.Encode(a.Routing), sqlcore.Millis(a.CreatedAt), sqlcore.Millis(a.UpdatedAt))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("state machine %s: %w", a.StateMachineArn, err)
		}
		return err
	})
	return interpretError("insert alias "+a.Arn(), err)
}

// AliasGet returns an alias.
func (e *Executor) AliasGet(ctx context.Context, stateMachineArn, name string) (*store.Alias, error) {
	a, err := scanAlias(e.q().QueryRow(ctx, aliasGetSQL, stateMachineArn, name))
	if err != nil {
		return nil, interpretError("get alias "+name+" of "+stateMachineArn, err)
	}
	return a, nil
}

// AliasUpdate writes an alias's description, routing and update date,
// routing to versions that exist, under the state machine's lock.
func (e *Executor) AliasUpdate(ctx context.Context, a *store.Alias) error {
	err := e.inTx(ctx, func(q querier) error {
		if err := lockVersions(ctx, q, a.StateMachineArn); err != nil {
			// No state machine: no alias either.
			return err
		}
		if err := execOne(ctx, q, aliasUpdateSQL, a.Description, aliasrouting.Encode(a.Routing),
			sqlcore.Millis(a.UpdatedAt), a.StateMachineArn, a.Name); err != nil {
			return err
		}
		return versionsExist(ctx, q, a.StateMachineArn, a.Routing)
	})
	return interpretError("update alias "+a.Arn(), err)
}

// AliasDelete deletes an alias.
func (e *Executor) AliasDelete(ctx context.Context, stateMachineArn, name string) error {
	err := execOne(ctx, e.q(), aliasDeleteSQL, stateMachineArn, name)
	return interpretError("delete alias "+name+" of "+stateMachineArn, err)
}

// AliasList lists a state machine's aliases named after after, by name.
func (e *Executor) AliasList(ctx context.Context, stateMachineArn, after string, limitN int) ([]*store.Alias, error) {
	as, err := queryAll(ctx, e.q(), aliasListSQL, []any{stateMachineArn, after, limit(limitN)}, scanAlias)
	if err != nil {
		return nil, interpretError("list aliases of "+stateMachineArn, err)
	}
	return as, nil
}

// execOne runs a write that must change a row: pgx.ErrNoRows when it
// changed none.
func execOne(ctx context.Context, q querier, query string, args ...any) error {
	tag, err := q.Exec(ctx, query, args...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return pgx.ErrNoRows
	}
	return nil
}
