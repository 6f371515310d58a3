package store

import (
	"context"
	"time"
)

// Activity is an activity: a named queue of tasks for workers.
type Activity struct {
	Arn  string
	Name string
	// EncryptionConfiguration as the API takes it, JSON text ("" when unset).
	EncryptionConfiguration string
	CreatedAt               time.Time
}

// ActivityListParams pages through activities by name.
type ActivityListParams struct {
	AfterName string // exclusive; "" from the start
	Limit     int
}

// ActivityStore stores activities.
type ActivityStore interface {
	// ActivityInsert fails with ErrAlreadyExists when the name is taken.
	ActivityInsert(ctx context.Context, a *Activity) (*Activity, error)
	ActivityGet(ctx context.Context, arn string) (*Activity, error)
	// ActivityDelete removes the activity and its tags; ErrNotFound when
	// there is none.
	ActivityDelete(ctx context.Context, arn string) error
	ActivityList(ctx context.Context, p *ActivityListParams) ([]*Activity, error)
}
