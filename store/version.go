package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Version is a published version of a state machine: one of its
// revisions, numbered.
type Version struct {
	StateMachineArn string
	Number          int64
	RevisionID      string
	Description     string
	CreatedAt       time.Time
}

// Arn is the version's ARN: the state machine's, then ":" and the number.
func (v *Version) Arn() string { return v.StateMachineArn + ":" + strconv.FormatInt(v.Number, 10) }

// Alias names one or two versions of a state machine, with the share of
// executions each gets.
type Alias struct {
	StateMachineArn string
	Name            string
	Description     string
	Routing         []AliasRoute
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Arn is the alias's ARN: the state machine's, then ":" and the name.
func (a *Alias) Arn() string { return a.StateMachineArn + ":" + a.Name }

// AliasRoute is a version of an alias and its weight (0 to 100).
type AliasRoute struct {
	Version int64
	Weight  int
}

// Pick returns the version of an alias that a draw n, uniform in
// [0, 100), lands on: each route gets its weight's share.
func (a *Alias) Pick(n int) int64 {
	for _, r := range a.Routing {
		if n < r.Weight {
			return r.Version
		}
		n -= r.Weight
	}
	return a.Routing[len(a.Routing)-1].Version
}

// VersionInUseError is VersionDelete's refusal of a version that aliases
// route to; it is ErrConflict.
type VersionInUseError struct {
	Aliases []string // the aliases' names, sorted
}

func (e *VersionInUseError) Error() string {
	return fmt.Sprintf("version routed to by aliases %s", strings.Join(e.Aliases, ", "))
}

// Is makes the error ErrConflict.
func (e *VersionInUseError) Is(target error) bool { return target == ErrConflict }

// VersionMissingError is AliasInsert's and AliasUpdate's refusal of a
// routing to a version that does not exist; it is ErrNotFound.
type VersionMissingError struct {
	Number int64
}

func (e *VersionMissingError) Error() string {
	return fmt.Sprintf("version %d does not exist", e.Number)
}

// Is makes the error ErrNotFound.
func (e *VersionMissingError) Is(target error) bool { return target == ErrNotFound }

// VersionStore keeps the published versions and the aliases of state
// machines. Deleting a state machine deletes them. A version an alias
// routes to cannot be deleted, and an alias cannot route to a version
// that does not exist: each driver checks it in the write's transaction,
// with the state machine's versions and aliases held still, so a deletion
// racing an alias's creation or update never leaves an alias routing to
// a deleted version.
type VersionStore interface {
	// VersionPublish publishes v.RevisionID of v.StateMachineArn as its
	// next version (v.Number is ignored; numbers are never used twice,
	// even after a deletion), or returns the version that has that
	// revision already, with created false. ErrNotFound when the state
	// machine does not exist.
	VersionPublish(ctx context.Context, v *Version) (out *Version, created bool, err error)
	// VersionGet returns a version; ErrNotFound when there is none.
	VersionGet(ctx context.Context, stateMachineArn string, number int64) (*Version, error)
	// VersionList lists versions newest first: those numbered below
	// before (0: from the newest), up to limit.
	VersionList(ctx context.Context, stateMachineArn string, before int64, limit int) ([]*Version, error)
	// VersionDelete deletes a version; ErrNotFound when there is none, a
	// *VersionInUseError when an alias routes to it.
	VersionDelete(ctx context.Context, stateMachineArn string, number int64) error
	// AliasInsert creates an alias; ErrAlreadyExists when the name is
	// taken, ErrNotFound when the state machine does not exist, a
	// *VersionMissingError when a version it routes to does not.
	AliasInsert(ctx context.Context, a *Alias) error
	// AliasGet returns an alias; ErrNotFound when there is none.
	AliasGet(ctx context.Context, stateMachineArn, name string) (*Alias, error)
	// AliasUpdate writes an alias's description, routing and update
	// date; ErrNotFound when there is none, a *VersionMissingError when a
	// version it routes to does not exist.
	AliasUpdate(ctx context.Context, a *Alias) error
	// AliasDelete deletes an alias; ErrNotFound when there is none.
	AliasDelete(ctx context.Context, stateMachineArn, name string) error
	// AliasList lists a state machine's aliases by name, those after
	// after, up to limit.
	AliasList(ctx context.Context, stateMachineArn, after string, limit int) ([]*Alias, error)
}
