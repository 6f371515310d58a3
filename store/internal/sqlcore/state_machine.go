package sqlcore

import (
	"context"
	"fmt"

	"stepwise/store"
)

const (
	stateMachineSelect = `
SELECT sm.arn, sm.name, sm.type, sm.status, sm.revision_id, r.definition, sm.role_arn,
       sm.description, sm.logging_configuration, sm.tracing_configuration,
       sm.encryption_configuration, sm.created_at, sm.updated_at
FROM stepwise_state_machine sm
JOIN stepwise_state_machine_revision r
  ON r.state_machine_arn = sm.arn AND r.revision_id = sm.revision_id`

	stateMachineGetSQL = stateMachineSelect + `
WHERE sm.arn = $1`

	stateMachineListSQL = stateMachineSelect + `
WHERE sm.name > $1
ORDER BY sm.name
LIMIT $2`

	stateMachineInsertSQL = `
INSERT INTO stepwise_state_machine (
    arn, name, type, status, revision_id, role_arn, description,
    logging_configuration, tracing_configuration, encryption_configuration,
    created_at, updated_at
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`

	stateMachineUpdateSQL = `
UPDATE stepwise_state_machine
SET status = $1, revision_id = coalesce($2, revision_id), role_arn = $3, description = $4,
    logging_configuration = $5, tracing_configuration = $6, encryption_configuration = $7,
    updated_at = $8
WHERE arn = $9`

	stateMachineDeleteSQL = `DELETE FROM stepwise_state_machine WHERE arn = $1`

	revisionInsertSQL = `
INSERT INTO stepwise_state_machine_revision (state_machine_arn, revision_id, definition, role_arn, created_at)
VALUES ($1, $2, $3, $4, $5)`

	revisionGetSQL = `
SELECT state_machine_arn, revision_id, definition, role_arn, created_at
FROM stepwise_state_machine_revision
WHERE state_machine_arn = $1 AND revision_id = $2`

	stateMachineDeleteVersionsSQL = `DELETE FROM stepwise_version WHERE state_machine_arn = $1`

	stateMachineDeleteAliasesSQL = `DELETE FROM stepwise_alias WHERE state_machine_arn = $1`
)

func scanStateMachine(s Scanner) (*store.StateMachine, error) {
	var sm store.StateMachine
	var created, updated int64
	if err := s.Scan(&sm.Arn, &sm.Name, &sm.Type, &sm.Status, &sm.RevisionID, &sm.Definition,
		&sm.RoleArn, &sm.Description, &sm.LoggingConfiguration, &sm.TracingConfiguration,
		&sm.EncryptionConfiguration, &created, &updated); err != nil {
		return nil, err
	}
	sm.CreatedAt, sm.UpdatedAt = FromMillis(created), FromMillis(updated)
	return &sm, nil
}

// StateMachineInsert creates a state machine and its first revision, whose
// creation time is the state machine's.
func (c *Core) StateMachineInsert(ctx context.Context, p *store.StateMachineInsertParams) (*store.StateMachine, error) {
	sm := p.StateMachine
	err := c.conn.InTx(ctx, func(q Querier) error {
		if _, err := q.Exec(ctx, stateMachineInsertSQL,
			sm.Arn, sm.Name, sm.Type, sm.Status, sm.RevisionID, sm.RoleArn, sm.Description,
			sm.LoggingConfiguration, sm.TracingConfiguration, sm.EncryptionConfiguration,
			Millis(sm.CreatedAt), Millis(sm.UpdatedAt)); err != nil {
			return err
		}
		_, err := q.Exec(ctx, revisionInsertSQL, sm.Arn, sm.RevisionID, sm.Definition, sm.RoleArn, Millis(sm.CreatedAt))
		return err
	})
	if err != nil {
		return nil, c.conn.Error("insert state machine "+sm.Arn, err)
	}
	out := *sm
	out.CreatedAt, out.UpdatedAt = Truncate(sm.CreatedAt), Truncate(sm.UpdatedAt)
	return &out, nil
}

// StateMachineGet returns a state machine with its current definition.
func (c *Core) StateMachineGet(ctx context.Context, arn string) (*store.StateMachine, error) {
	sm, err := scanStateMachine(c.conn.Reader().QueryRow(ctx, stateMachineGetSQL, arn))
	if err != nil {
		return nil, c.conn.Error("get state machine "+arn, err)
	}
	return sm, nil
}

// StateMachineUpdate writes the status, role, description and
// configurations of p.StateMachine. With NewRevision it also records a
// revision (RevisionID, Definition and RoleArn, created at UpdatedAt) and
// makes it current; without, RevisionID and Definition are not read and
// the current revision stays. Name, Type and CreatedAt never change.
func (c *Core) StateMachineUpdate(ctx context.Context, p *store.StateMachineUpdateParams) (*store.StateMachine, error) {
	sm := p.StateMachine
	var out *store.StateMachine
	err := c.conn.InTx(ctx, func(q Querier) error {
		var revisionID *string // NULL keeps the current one
		if p.NewRevision {
			revisionID = &sm.RevisionID
		}
		n, err := q.Exec(ctx, stateMachineUpdateSQL,
			sm.Status, revisionID, sm.RoleArn, sm.Description,
			sm.LoggingConfiguration, sm.TracingConfiguration, sm.EncryptionConfiguration,
			Millis(sm.UpdatedAt), sm.Arn)
		if err != nil {
			return err
		}
		if n == 0 {
			return c.dialect.ErrNoRows
		}
		if p.NewRevision {
			if _, err := q.Exec(ctx, revisionInsertSQL, sm.Arn, sm.RevisionID, sm.Definition, sm.RoleArn, Millis(sm.UpdatedAt)); err != nil {
				return err
			}
		}
		out, err = scanStateMachine(q.QueryRow(ctx, stateMachineGetSQL, sm.Arn))
		return err
	})
	if err != nil {
		return nil, c.conn.Error("update state machine "+sm.Arn, err)
	}
	return out, nil
}

// StateMachineDelete removes a state machine with its tags, versions and
// aliases (and the count of its versions, a column of its row); its
// revisions stay. In PostgreSQL, the row's lock keeps publishers and
// alias inserters (which lock it too) from adding to what is deleted.
func (c *Core) StateMachineDelete(ctx context.Context, arn string) error {
	err := c.conn.InTx(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, stateMachineDeleteSQL, arn)
		if err != nil {
			return err
		}
		if n == 0 {
			return c.dialect.ErrNoRows
		}
		return q.ExecBatch(ctx,
			Stmt{TagDeleteAllSQL, []any{arn}},
			Stmt{stateMachineDeleteVersionsSQL, []any{arn}},
			Stmt{stateMachineDeleteAliasesSQL, []any{arn}})
	})
	return c.conn.Error("delete state machine "+arn, err)
}

// StateMachineList pages through state machines by name.
func (c *Core) StateMachineList(ctx context.Context, p *store.StateMachineListParams) ([]*store.StateMachine, error) {
	sms, err := QueryAll(ctx, c.conn.Reader(), stateMachineListSQL, []any{p.AfterName, c.dialect.Limit(p.Limit)}, scanStateMachine)
	if err != nil {
		return nil, c.conn.Error("list state machines", err)
	}
	return sms, nil
}

// RevisionGet returns one revision of a state machine, deleted or not.
func (c *Core) RevisionGet(ctx context.Context, stateMachineArn, revisionID string) (*store.Revision, error) {
	var r store.Revision
	var created int64
	err := c.conn.Reader().QueryRow(ctx, revisionGetSQL, stateMachineArn, revisionID).
		Scan(&r.StateMachineArn, &r.RevisionID, &r.Definition, &r.RoleArn, &created)
	if err != nil {
		return nil, c.conn.Error(fmt.Sprintf("get revision %s of %s", revisionID, stateMachineArn), err)
	}
	r.CreatedAt = FromMillis(created)
	return &r, nil
}
