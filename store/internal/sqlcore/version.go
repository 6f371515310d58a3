package sqlcore

import (
	"context"
	"errors"
	"fmt"
	"math"

	"stepwise/store"
	"stepwise/store/internal/aliasrouting"
)

const (
	// VersionColumns and AliasColumns are the columns of a version and an
	// alias, in the order their scans read them.
	VersionColumns = `state_machine_arn, number, revision_id, description, created_at`

	versionGetSQL = `SELECT ` + VersionColumns + ` FROM stepwise_version WHERE state_machine_arn = $1 AND number = $2`

	// VersionOfRevisionSQL, VersionListSQL and AliasListSQL are exported
	// for the drivers' tests of their query plans.
	VersionOfRevisionSQL = `SELECT ` + VersionColumns + ` FROM stepwise_version WHERE state_machine_arn = $1 AND revision_id = $2`

	VersionListSQL = `SELECT ` + VersionColumns + `
FROM stepwise_version
WHERE state_machine_arn = $1 AND number < $2
ORDER BY number DESC
LIMIT $3`

	versionDeleteSQL = `DELETE FROM stepwise_version WHERE state_machine_arn = $1 AND number = $2`

	AliasColumns = `state_machine_arn, name, description, routing, created_at, updated_at`

	aliasGetSQL = `SELECT ` + AliasColumns + ` FROM stepwise_alias WHERE state_machine_arn = $1 AND name = $2`

	aliasRoutingsSQL = `SELECT name, routing FROM stepwise_alias WHERE state_machine_arn = $1 ORDER BY name`

	versionExistsSQL = `SELECT EXISTS (SELECT 1 FROM stepwise_version WHERE state_machine_arn = $1 AND number = $2)`

	aliasUpdateSQL = `
UPDATE stepwise_alias SET description = $1, routing = $2, updated_at = $3
WHERE state_machine_arn = $4 AND name = $5`

	aliasDeleteSQL = `DELETE FROM stepwise_alias WHERE state_machine_arn = $1 AND name = $2`

	AliasListSQL = `SELECT ` + AliasColumns + `
FROM stepwise_alias
WHERE state_machine_arn = $1 AND name > $2
ORDER BY name
LIMIT $3`
)

func scanVersion(s Scanner) (*store.Version, error) {
	var v store.Version
	var created int64
	if err := s.Scan(&v.StateMachineArn, &v.Number, &v.RevisionID, &v.Description, &created); err != nil {
		return nil, err
	}
	v.CreatedAt = FromMillis(created)
	return &v, nil
}

func scanAlias(s Scanner) (*store.Alias, error) {
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
	a.CreatedAt, a.UpdatedAt = FromMillis(created), FromMillis(updated)
	return &a, nil
}

// VersionPublish publishes v.RevisionID as the state machine's next
// version, or returns the version that has it already. Publishers of one
// state machine take turns (Dialect.LockStateMachine): a concurrent
// publisher of the same revision waits, then finds the version the first
// one made.
func (c *Core) VersionPublish(ctx context.Context, v *store.Version) (*store.Version, bool, error) {
	var out *store.Version
	created := false
	err := c.conn.InTx(ctx, func(q Querier) error {
		if err := c.dialect.LockStateMachine(ctx, q, v.StateMachineArn); err != nil {
			return err
		}
		existing, err := scanVersion(q.QueryRow(ctx, VersionOfRevisionSQL, v.StateMachineArn, v.RevisionID))
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, c.dialect.ErrNoRows) {
			return err
		}
		number, err := c.dialect.InsertVersion(ctx, q, v)
		if err != nil {
			return err
		}
		out = &store.Version{StateMachineArn: v.StateMachineArn, Number: number, RevisionID: v.RevisionID,
			Description: v.Description, CreatedAt: Truncate(v.CreatedAt)}
		created = true
		return nil
	})
	if err != nil {
		return nil, false, c.conn.Error(fmt.Sprintf("publish revision %s of %s", v.RevisionID, v.StateMachineArn), err)
	}
	return out, created, nil
}

// VersionGet returns a version.
func (c *Core) VersionGet(ctx context.Context, stateMachineArn string, number int64) (*store.Version, error) {
	v, err := scanVersion(c.conn.Reader().QueryRow(ctx, versionGetSQL, stateMachineArn, number))
	if err != nil {
		return nil, c.conn.Error(fmt.Sprintf("get version %d of %s", number, stateMachineArn), err)
	}
	return v, nil
}

// VersionList lists a state machine's versions numbered below before (0:
// all), newest first.
func (c *Core) VersionList(ctx context.Context, stateMachineArn string, before int64, limitN int) ([]*store.Version, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	vs, err := QueryAll(ctx, c.conn.Reader(), VersionListSQL, []any{stateMachineArn, before, c.dialect.Limit(limitN)}, scanVersion)
	if err != nil {
		return nil, c.conn.Error("list versions of "+stateMachineArn, err)
	}
	return vs, nil
}

// VersionDelete deletes a version no alias routes to, checked under the
// state machine's lock (Dialect.LockStateMachine), so that no alias is
// created or changed in between.
func (c *Core) VersionDelete(ctx context.Context, stateMachineArn string, number int64) error {
	err := c.conn.InTx(ctx, func(q Querier) error {
		if err := c.dialect.LockStateMachine(ctx, q, stateMachineArn); err != nil {
			return err
		}
		aliases, err := QueryAll(ctx, q, aliasRoutingsSQL, []any{stateMachineArn}, scanNamedRouting)
		if err != nil {
			return err
		}
		if err := aliasrouting.InUse(aliases, number); err != nil {
			return err
		}
		return ExecOne(ctx, q, c.dialect.ErrNoRows, versionDeleteSQL, stateMachineArn, number)
	})
	return c.conn.Error(fmt.Sprintf("delete version %d of %s", number, stateMachineArn), err)
}

func scanNamedRouting(s Scanner) (aliasrouting.Named, error) {
	var a aliasrouting.Named
	err := s.Scan(&a.Name, &a.Routing)
	return a, err
}

// VersionsExist reports whether the versions of a routing exist, in q.
func VersionsExist(ctx context.Context, q Querier, stateMachineArn string, routes []store.AliasRoute) error {
	return aliasrouting.Missing(routes, func(n int64) (bool, error) {
		var ok bool
		err := q.QueryRow(ctx, versionExistsSQL, stateMachineArn, n).Scan(&ok)
		return ok, err
	})
}

// AliasInsert creates an alias of an existing state machine, routing to
// versions that exist, under the state machine's lock
// (Dialect.LockStateMachine, Dialect.InsertAlias).
func (c *Core) AliasInsert(ctx context.Context, a *store.Alias) error {
	err := c.conn.InTx(ctx, func(q Querier) error {
		if err := c.dialect.LockStateMachine(ctx, q, a.StateMachineArn); err != nil {
			return err
		}
		return c.dialect.InsertAlias(ctx, q, a)
	})
	return c.conn.Error("insert alias "+a.Arn(), err)
}

// AliasGet returns an alias.
func (c *Core) AliasGet(ctx context.Context, stateMachineArn, name string) (*store.Alias, error) {
	a, err := scanAlias(c.conn.Reader().QueryRow(ctx, aliasGetSQL, stateMachineArn, name))
	if err != nil {
		return nil, c.conn.Error("get alias "+name+" of "+stateMachineArn, err)
	}
	return a, nil
}

// AliasUpdate writes an alias's description, routing and update date,
// routing to versions that exist, under the state machine's lock.
func (c *Core) AliasUpdate(ctx context.Context, a *store.Alias) error {
	err := c.conn.InTx(ctx, func(q Querier) error {
		if err := c.dialect.LockStateMachine(ctx, q, a.StateMachineArn); err != nil {
			// No state machine: no alias either.
			return err
		}
		if err := ExecOne(ctx, q, c.dialect.ErrNoRows, aliasUpdateSQL, a.Description, aliasrouting.Encode(a.Routing),
			Millis(a.UpdatedAt), a.StateMachineArn, a.Name); err != nil {
			return err
		}
		return VersionsExist(ctx, q, a.StateMachineArn, a.Routing)
	})
	return c.conn.Error("update alias "+a.Arn(), err)
}

// AliasDelete deletes an alias.
func (c *Core) AliasDelete(ctx context.Context, stateMachineArn, name string) error {
	err := ExecOne(ctx, c.conn.Writer(), c.dialect.ErrNoRows, aliasDeleteSQL, stateMachineArn, name)
	return c.conn.Error("delete alias "+name+" of "+stateMachineArn, err)
}

// AliasList lists a state machine's aliases named after after, by name.
func (c *Core) AliasList(ctx context.Context, stateMachineArn, after string, limitN int) ([]*store.Alias, error) {
	as, err := QueryAll(ctx, c.conn.Reader(), AliasListSQL, []any{stateMachineArn, after, c.dialect.Limit(limitN)}, scanAlias)
	if err != nil {
		return nil, c.conn.Error("list aliases of "+stateMachineArn, err)
	}
	return as, nil
}

// ExecOne runs a write that must change a row: noRows (Dialect.ErrNoRows)
// when it changed none.
func ExecOne(ctx context.Context, q Querier, noRows error, query string, args ...any) error {
	n, err := q.Exec(ctx, query, args...)
	if err != nil {
		return err
	}
	if n == 0 {
		return noRows
	}
	return nil
}
