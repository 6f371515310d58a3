package store

import (
	"context"
	"time"
)

// StateMachine is a state machine; its definition lives in revisions.
type StateMachine struct {
	Arn         string
	Name        string
	Type        string // STANDARD or EXPRESS
	Status      string // ACTIVE or DELETING
	RevisionID  string // the current revision
	Definition  string // the current revision's definition
	RoleArn     string
	Description string
	// Configuration blocks as the API takes them, JSON text ("" when unset).
	LoggingConfiguration    string
	TracingConfiguration    string
	EncryptionConfiguration string
	CreatedAt               time.Time
	UpdatedAt               time.Time
}

// Revision is one version of a state machine's definition and role.
type Revision struct {
	StateMachineArn string
	RevisionID      string
	Definition      string
	RoleArn         string
	CreatedAt       time.Time
}

// StateMachineInsertParams creates a state machine and its first revision.
type StateMachineInsertParams struct {
	StateMachine *StateMachine // RevisionID and Definition set
}

// StateMachineUpdateParams replaces a state machine's role, description or
// configuration. With NewRevision the RevisionID and Definition of
// StateMachine become a new revision row and the current one; without it
// they are ignored.
type StateMachineUpdateParams struct {
	StateMachine *StateMachine
	NewRevision  bool
}

// StateMachineListParams pages through state machines by name.
type StateMachineListParams struct {
	AfterName string // exclusive; "" from the start
	Limit     int
}

// StateMachineStore stores state machines.
type StateMachineStore interface {
	// StateMachineInsert fails with ErrAlreadyExists when the name is taken.
	StateMachineInsert(ctx context.Context, p *StateMachineInsertParams) (*StateMachine, error)
	StateMachineGet(ctx context.Context, arn string) (*StateMachine, error)
	StateMachineUpdate(ctx context.Context, p *StateMachineUpdateParams) (*StateMachine, error)
	// StateMachineDelete removes the state machine and its tags (its
	// revisions stay for the executions that ran them); ErrNotFound when
	// there is none.
	StateMachineDelete(ctx context.Context, arn string) error
	StateMachineList(ctx context.Context, p *StateMachineListParams) ([]*StateMachine, error)
	RevisionGet(ctx context.Context, stateMachineArn, revisionID string) (*Revision, error)
}
