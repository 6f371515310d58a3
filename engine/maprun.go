package engine

import "context"

// UpdateMapRun changes a map run's concurrency and tolerance (nil: as
// they are). A run in progress here applies them at once; one running on
// another node takes them from its row within a second or so.
func (e *Engine) UpdateMapRun(ctx context.Context, arn string, maxConcurrency *int, percent *float64, count *int64) error {
	return e.mapRuns.Update(ctx, arn, maxConcurrency, percent, count)
}
