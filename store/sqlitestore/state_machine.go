package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
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
WHERE sm.arn = ?`

	stateMachineListSQL = stateMachineSelect + `
WHERE sm.name > ?
ORDER BY sm.name
LIMIT ?`

	stateMachineInsertSQL = `
INSERT INTO stepwise_state_machine (
    arn, name, type, status, revision_id, role_arn, description,
    logging_configuration, tracing_configuration, encryption_configuration,
    created_at, updated_at
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

	stateMachineUpdateSQL = `
UPDATE stepwise_state_machine
SET status = ?, revision_id = coalesce(?, revision_id), role_arn = ?, description = ?,
    logging_configuration = ?, tracing_configuration = ?, encryption_configuration = ?,
    updated_at = ?
WHERE arn = ?`

	stateMachineDeleteSQL = `DELETE FROM stepwise_state_machine WHERE arn = ?`

	stateMachineDeleteTagsSQL = `DELETE FROM stepwise_tag WHERE resource_arn = ?`

	stateMachineDeleteVersionsSQL = `DELETE FROM stepwise_version WHERE state_machine_arn = ?`

	stateMachineDeleteAliasesSQL = `DELETE FROM stepwise_alias WHERE state_machine_arn = ?`

	revisionInsertSQL = `
INSERT INTO stepwise_state_machine_revision (state_machine_arn, revision_id, definition, role_arn, created_at)
VALUES (?, ?, ?, ?, ?)`

	revisionGetSQL = `
SELECT state_machine_arn, revision_id, definition, role_arn, created_at
FROM stepwise_state_machine_revision
WHERE state_machine_arn = ? AND revision_id = ?`
)

func scanStateMachine(s scanner) (*store.StateMachine, error) {
	var sm store.StateMachine
	var created, updated int64
	if err := s.Scan(&sm.Arn, &sm.Name, &sm.Type, &sm.Status, &sm.RevisionID, &sm.Definition,
		&sm.RoleArn, &sm.Description, &sm.LoggingConfiguration, &sm.TracingConfiguration,
		&sm.EncryptionConfiguration, &created, &updated); err != nil {
		return nil, err
	}
	sm.CreatedAt, sm.UpdatedAt = sqlcore.FromMillis(created), sqlcore.FromMillis(updated)
	return &sm, nil
}

// StateMachineInsert creates a state machine and its first revision, whose
// creation time is the state machine's.
func (e *Executor) StateMachineInsert(ctx context.Context, p *store.StateMachineInsertParams) (*store.StateMachine, error) {
	sm := p.StateMachine
	err := e.inTx(ctx, func(q querier) error {
		if _, err := q.ExecContext(ctx, stateMachineInsertSQL,
			sm.Arn, sm.Name, sm.Type, sm.Status, sm.RevisionID, sm.RoleArn, sm.Description,
			sm.LoggingConfiguration, sm.TracingConfiguration, sm.EncryptionConfiguration,
			sqlcore.Millis(sm.CreatedAt), sqlcore.Millis(sm.UpdatedAt)); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, revisionInsertSQL, sm.Arn, sm.RevisionID, sm.Definition, sm.RoleArn, sqlcore.Millis(sm.CreatedAt))
		return err
	})
	if err != nil {
		return nil, interpretError("insert state machine "+sm.Arn, err)
	}
	out := *sm
	out.CreatedAt, out.UpdatedAt = sqlcore.Truncate(sm.CreatedAt), sqlcore.Truncate(sm.UpdatedAt)
	return &out, nil
}

// StateMachineGet returns a state machine with its current definition.
func (e *Executor) StateMachineGet(ctx context.Context, arn string) (*store.StateMachine, error) {
	sm, err := scanStateMachine(e.reader().QueryRowContext(ctx, stateMachineGetSQL, arn))
	if err != nil {
		return nil, interpretError("get state machine "+arn, err)
	}
	return sm, nil
}

// StateMachineUpdate writes the status, role, description and
// configurations of p.StateMachine. With NewRevision it also records a
// revision (RevisionID, Definition and RoleArn, created at UpdatedAt) and
// makes it current; without, RevisionID and Definition are not read and
// the current revision stays. Name, Type and CreatedAt never change.
func (e *Executor) StateMachineUpdate(ctx context.Context, p *store.StateMachineUpdateParams) (*store.StateMachine, error) {
	sm := p.StateMachine
	var out *store.StateMachine
	err := e.inTx(ctx, func(q querier) error {
		var revisionID any // NULL keeps the current one
		if p.NewRevision {
			revisionID = sm.RevisionID
		}
		res, err := q.ExecContext(ctx, stateMachineUpdateSQL,
			sm.Status, revisionID, sm.RoleArn, sm.Description,
			sm.LoggingConfiguration, sm.TracingConfiguration, sm.EncryptionConfiguration,
			sqlcore.Millis(sm.UpdatedAt), sm.Arn)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return sql.ErrNoRows
		}
		if p.NewRevision {
			if _, err := q.ExecContext(ctx, revisionInsertSQL, sm.Arn, sm.RevisionID, sm.Definition, sm.RoleArn, sqlcore.Millis(sm.UpdatedAt)); err != nil {
				return err
			}
		}
		out, err = scanStateMachine(q.QueryRowContext(ctx, stateMachineGetSQL, sm.Arn))
		return err
	})
	if err != nil {
		return nil, interpretError("update state machine "+sm.Arn, err)
	}
	return out, nil
}

// StateMachineDelete removes a state machine with its tags, versions and
// aliases (and the count of its versions, a column of its row); its
// revisions stay.
func (e *Executor) StateMachineDelete(ctx context.Context, arn string) error {
	err := e.inTx(ctx, func(q querier) error {
		res, err := q.ExecContext(ctx, stateMachineDeleteSQL, arn)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return sql.ErrNoRows
		}
		for _, query := range []string{stateMachineDeleteTagsSQL, stateMachineDeleteVersionsSQL, stateMachineDeleteAliasesSQL} {
			if _, err := q.ExecContext(ctx, query, arn); err != nil {
				return err
			}
		}
		return nil
	})
	return interpretError("delete state machine "+arn, err)
}

// StateMachineList pages through state machines by name.
func (e *Executor) StateMachineList(ctx context.Context, p *store.StateMachineListParams) ([]*store.StateMachine, error) {
	sms, err := queryAll(ctx, e.reader(), stateMachineListSQL, []any{p.AfterName, limit(p.Limit)}, scanStateMachine)
	if err != nil {
		return nil, interpretError("list state machines", err)
	}
	return sms, nil
}

// RevisionGet returns one revision of a state machine, deleted or not.
func (e *Executor) RevisionGet(ctx context.Context, stateMachineArn, revisionID string) (*store.Revision, error) {
	var r store.Revision
	var created int64
	err := e.reader().QueryRowContext(ctx, revisionGetSQL, stateMachineArn, revisionID).
		Scan(&r.StateMachineArn, &r.RevisionID, &r.Definition, &r.RoleArn, &created)
	if err != nil {
		return nil, interpretError(fmt.Sprintf("get revision %s of %s", revisionID, stateMachineArn), err)
	}
	r.CreatedAt = sqlcore.FromMillis(created)
	return &r, nil
}
