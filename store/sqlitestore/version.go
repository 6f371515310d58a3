package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"stepwise/store"
	"stepwise/store/internal/aliasrouting"
	"stepwise/store/internal/sqlcore"
)

const (
	versionColumns = `state_machine_arn, number, revision_id, description, created_at`

	versionGetSQL = `SELECT ` + versionColumns + ` FROM stepwise_version WHERE state_machine_arn = ? AND number = ?`

	versionOfRevisionSQL = `SELECT ` + versionColumns + ` FROM stepwise_version WHERE state_machine_arn = ? AND revision_id = ?`

	// versionNextSQL hands out a state machine's next version number; no
	// row when there is no such state machine.
	versionNextSQL = `UPDATE stepwise_state_machine SET last_version = last_version + 1 WHERE arn = ? RETURNING last_version`

	versionInsertSQL = `INSERT INTO stepwise_version (` + versionColumns + `) VALUES (?, ?, ?, ?, ?)`

	versionListSQL = `SELECT ` + versionColumns + `
FROM stepwise_version
WHERE state_machine_arn = ? AND number < ?
ORDER BY number DESC
LIMIT ?`

	versionDeleteSQL = `DELETE FROM stepwise_version WHERE state_machine_arn = ? AND number = ?`

	aliasColumns = `state_machine_arn, name, description, routing, created_at, updated_at`

	// aliasInsertSQL inserts nothing when there is no such state machine.
	aliasInsertSQL = `
INSERT INTO stepwise_alias (` + aliasColumns + `)
SELECT ?, ?, ?, ?, ?, ?
WHERE EXISTS (SELECT 1 FROM stepwise_state_machine WHERE arn = ?)`

	aliasGetSQL = `SELECT ` + aliasColumns + ` FROM stepwise_alias WHERE state_machine_arn = ? AND name = ?`

	aliasUpdateSQL = `
UPDATE stepwise_alias SET description = ?, routing = ?, updated_at = ?
WHERE state_machine_arn = ? AND name = ?`

	aliasDeleteSQL = `DELETE FROM stepwise_alias WHERE state_machine_arn = ? AND name = ?`

	aliasRoutingsSQL = `SELECT name, routing FROM stepwise_alias WHERE state_machine_arn = ? ORDER BY name`

	versionExistsSQL = `SELECT EXISTS (SELECT 1 FROM stepwise_version WHERE state_machine_arn = ? AND number = ?)`

	aliasListSQL = `SELECT ` + aliasColumns + `
FROM stepwise_alias
WHERE state_machine_arn = ? AND name > ?
ORDER BY name
LIMIT ?`
)

func scanVersion(s scanner) (*store.Version, error) {
	var v store.Version
	var created int64
	if err := s.Scan(&v.StateMachineArn, &v.Number, &v.RevisionID, &v.Description, &created); err != nil {
		return nil, err
	}
	v.CreatedAt = sqlcore.FromMillis(created)
	return &v, nil
}

func scanAlias(s scanner) (*store.Alias, error) {
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
// version, or returns the version that has it already. The writer is one
// connection, so publishers take turns.
func (e *Executor) VersionPublish(ctx context.Context, v *store.Version) (*store.Version, bool, error) {
	var out *store.Version
	created := false
	err := e.inTx(ctx, func(q querier) error {
		existing, err := scanVersion(q.QueryRowContext(ctx, versionOfRevisionSQL, v.StateMachineArn, v.RevisionID))
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var number int64
		if err := q.QueryRowContext(ctx, versionNextSQL, v.StateMachineArn).Scan(&number); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("state machine %s: %w", v.StateMachineArn, err)
			}
			return err
		}
		if _, err := q.ExecContext(ctx, versionInsertSQL, v.StateMachineArn, number, v.RevisionID, v.Description, sqlcore.Millis(v.CreatedAt)); err != nil {
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
	v, err := scanVersion(e.reader().QueryRowContext(ctx, versionGetSQL, stateMachineArn, number))
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
	vs, err := queryAll(ctx, e.reader(), versionListSQL, []any{stateMachineArn, before, limit(limitN)}, scanVersion)
	if err != nil {
		return nil, interpretError("list versions of "+stateMachineArn, err)
	}
	return vs, nil
}

// VersionDelete deletes a version no alias routes to. The check and the
// deletion are one transaction on the one writer connection, so no alias
// is created or changed in between.
func (e *Executor) VersionDelete(ctx context.Context, stateMachineArn string, number int64) error {
	err := e.inTx(ctx, func(q querier) error {
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

func scanNamedRouting(s scanner) (aliasrouting.Named, error) {
	var a aliasrouting.Named
	err := s.Scan(&a.Name, &a.Routing)
	return a, err
}

// versionsExist reports whether the versions of a routing exist, in q.
func versionsExist(ctx context.Context, q querier, stateMachineArn string, routes []store.AliasRoute) error {
	return aliasrouting.Missing(routes, func(n int64) (bool, error) {
		var ok bool
		err := q.QueryRowContext(ctx, versionExistsSQL, stateMachineArn, n).Scan(&ok)
		return ok, err
	})
}

// AliasInsert creates an alias of an existing state machine, routing to
// versions that exist.
func (e *Executor) AliasInsert(ctx context.Context, a *store.Alias) error {
	err := e.inTx(ctx, func(q querier) error {
		err := execOne(ctx, q, aliasInsertSQL, a.StateMachineArn, a.Name, a.Description,
			aliasrouting.Encode(a.Routing), sqlcore.Millis(a.CreatedAt), sqlcore.Millis(a.UpdatedAt), a.StateMachineArn)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("state machine %s: %w", a.StateMachineArn, err)
		}
		if err != nil {
			return err
		}
		return versionsExist(ctx, q, a.StateMachineArn, a.Routing)
	})
	return interpretError("insert alias "+a.Arn(), err)
}

// AliasGet returns an alias.
func (e *Executor) AliasGet(ctx context.Context, stateMachineArn, name string) (*store.Alias, error) {
	a, err := scanAlias(e.reader().QueryRowContext(ctx, aliasGetSQL, stateMachineArn, name))
	if err != nil {
		return nil, interpretError("get alias "+name+" of "+stateMachineArn, err)
	}
	return a, nil
}

// AliasUpdate writes an alias's description, routing and update date,
// routing to versions that exist.
func (e *Executor) AliasUpdate(ctx context.Context, a *store.Alias) error {
	err := e.inTx(ctx, func(q querier) error {
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
	err := execOne(ctx, e.writer(), aliasDeleteSQL, stateMachineArn, name)
	return interpretError("delete alias "+name+" of "+stateMachineArn, err)
}

// AliasList lists a state machine's aliases named after after, by name.
func (e *Executor) AliasList(ctx context.Context, stateMachineArn, after string, limitN int) ([]*store.Alias, error) {
	as, err := queryAll(ctx, e.reader(), aliasListSQL, []any{stateMachineArn, after, limit(limitN)}, scanAlias)
	if err != nil {
		return nil, interpretError("list aliases of "+stateMachineArn, err)
	}
	return as, nil
}

// execOne runs a write that must change a row: sql.ErrNoRows when it
// changed none.
func execOne(ctx context.Context, q querier, query string, args ...any) error {
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return sql.ErrNoRows
	}
	return nil
}
