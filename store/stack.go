package store

import (
	"context"
	"time"
)

// Stack is the record of a deployed template (CloudFormation/SAM/CDK stack): its name and the deployer's JSON (Body).
type Stack struct {
	Name      string
	Body      string // JSON text, the deployer's own
	CreatedAt time.Time
	UpdatedAt time.Time
}

// StackStore keeps the records of deployed template stacks.
type StackStore interface {
	// StackPut inserts the stack, or replaces the Body (and UpdatedAt) of the one of that name; CreatedAt stays the first put's.
	StackPut(ctx context.Context, s *Stack) error
	// StackGet returns the stack of that name; ErrNotFound when there is none.
	StackGet(ctx context.Context, name string) (*Stack, error)
	// StackList returns every stack, by name.
	StackList(ctx context.Context) ([]*Stack, error)
	// StackDelete deletes it; ErrNotFound when there is none.
	StackDelete(ctx context.Context, name string) error
}
