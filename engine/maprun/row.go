package maprun

import (
	"context"
	"errors"
	"sync"
	"time"

	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/store"
)

// A map run's row (store.MapRun): its settings and counts as
// DescribeMapRun shows them, written in the order of their snapshots;
// UpdateMapRun's changes, and on PostgreSQL the ends of children that
// ended on other nodes.

// settingsToRow shows the tolerance in effect in the row, as
// DescribeMapRun does (0 for a bound not set).
func (r *mapRun) settingsToRow() {
	r.row.ToleratedFailureCount = max(r.run.Tolerance.Count, 0)
	r.row.ToleratedFailurePercentage = max(r.run.Tolerance.Percent, 0)
}

// rowToSettings takes the tolerance of a row written by an UpdateMapRun:
// a bound the row shows other than the run's.
func (r *mapRun) rowToSettings(row *store.MapRun) {
	tol := &r.run.Tolerance
	if row.ToleratedFailureCount != max(tol.Count, 0) {
		tol.Count = row.ToleratedFailureCount
	}
	if row.ToleratedFailurePercentage != max(tol.Percent, 0) {
		tol.Percent = row.ToleratedFailurePercentage
	}
}

// stopAll stops the children named, and waits for it.
func (r *mapRun) stopAll(arns []string, cause string) {
	h := r.h
	var wg sync.WaitGroup
	sem := make(chan struct{}, Starters)
	for _, arn := range arns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := h.Stop(h.Context(), arn, cause); err != nil && !errors.Is(err, task.ErrStopped) {
				r.rn.cfg.Logger.DebugContext(h.Context(), "engine: stop map run child", "execution_arn", arn, "error", err)
			}
		}()
	}
	wg.Wait()
}

// snapshot is the run's row as it stands, counts filled in, and its
// sequence number. r.mu is held.
func (r *mapRun) snapshot() (store.MapRun, uint64) {
	r.row.ItemCounts, r.row.ExecutionCounts = r.run.Counts()
	r.seq++
	return r.row, r.seq
}

// save writes a snapshot of the row, unless a later one was written
// already: the writes of a run land in the order of their snapshots.
func (r *mapRun) save(row store.MapRun, seq uint64) error {
	r.saveMu.Lock()
	defer r.saveMu.Unlock()
	if seq <= r.savedSeq {
		return nil
	}
	if err := r.h.Executor().MapRunPut(r.h.Context(), &row); err != nil {
		return err
	}
	r.savedSeq, r.saved, r.haveSaved = seq, row, true
	return nil
}

// Cancel stops a run whose task was cancelled (its Map state aborted):
// the children still running are stopped, the run is ABORTED.
func (rn *Runner) Cancel(parentArn, taskID string) {
	h := rn.host
	rn.mu.Lock()
	if rn.dropWaiterLocked(parentArn, taskID) {
		// Still in the backlog: it never opened, so it has nothing to
		// stop and no row.
		rn.mu.Unlock()
		return
	}
	var r *mapRun
	for _, c := range rn.runs {
		if c.parent.Arn == parentArn && c.taskID == taskID {
			r = c
		}
	}
	rn.mu.Unlock()
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended && !r.writing {
		return
	}
	if r.writing {
		r.cancelled = true
		h.Tasks().Cancel(parentArn, taskID+"-write")
	}
	stop := r.stopRunning()
	r.ended = true
	now := rn.cfg.Now()
	r.row.Status, r.row.StopDate = "ABORTED", &now
	row, seq := r.snapshot()
	r.unregister()
	h.Go(func(ctx context.Context) {
		r.stopAll(stop, "The Map Run was aborted.")
		if err := r.save(row, seq); err != nil && ctx.Err() == nil {
			rn.cfg.Logger.ErrorContext(ctx, "engine: map run row", "map_run_arn", row.Arn, "error", err)
		}
	})
}

// watch writes the run's row as it progresses, takes the settings an
// UpdateMapRun on another node wrote, and finds the ends of children
// that ended where the run could not hear of them (on another node).
func (r *mapRun) watch() {
	h := r.h
	ctx := h.Context()
	t := time.NewTicker(SaveEvery)
	defer t.Stop()
	polls := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		polls++
		if r.rn.cfg.Clustered {
			r.adoptUpdate()
		}
		r.mu.Lock()
		if r.ended {
			r.mu.Unlock()
			return
		}
		var row store.MapRun
		var seq uint64
		if r.dirty {
			r.dirty = false
			row, seq = r.snapshot()
		}
		var elsewhere []int
		if polls%5 == 0 && r.rn.cfg.Clustered {
			for _, i := range r.run.Running() {
				if !h.Live(r.names.Arn(i)) {
					elsewhere = append(elsewhere, i)
				}
			}
		}
		r.mu.Unlock()
		if seq > 0 {
			if err := r.save(row, seq); err != nil && ctx.Err() == nil {
				r.rn.cfg.Logger.ErrorContext(ctx, "engine: map run row", "map_run_arn", row.Arn, "error", err)
			}
		}
		for _, i := range elsewhere {
			if c, err := h.Executor().ExecutionGet(ctx, r.names.Arn(i)); err == nil && c.Status != history.StatusRunning {
				r.rn.ChildEnded(c)
			}
		}
	}
}

// adoptUpdate applies the settings another node's UpdateMapRun wrote to
// the run's row (those differing from what this node last wrote).
func (r *mapRun) adoptUpdate() {
	stored, err := r.h.Executor().MapRunGet(r.h.Context(), r.req.Arn)
	if err != nil {
		return
	}
	r.saveMu.Lock()
	saved, ok := r.saved, r.haveSaved
	r.saveMu.Unlock()
	if !ok || (stored.MaxConcurrency == saved.MaxConcurrency && stored.ToleratedFailureCount == saved.ToleratedFailureCount &&
		stored.ToleratedFailurePercentage == saved.ToleratedFailurePercentage) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	r.row.MaxConcurrency = stored.MaxConcurrency
	r.rowToSettings(stored)
	r.settingsToRow()
	r.dirty = true
	r.pump()
}

// Update changes a map run's concurrency and tolerance (nil: as they
// are), for UpdateMapRun. A run in progress here applies them at once;
// one running on another node takes them from its row within a second or
// so.
func (rn *Runner) Update(ctx context.Context, arn string, maxConcurrency *int, percent *float64, count *int64) error {
	if r := rn.get(arn); r != nil {
		r.mu.Lock()
		if !r.ended {
			if maxConcurrency != nil {
				r.row.MaxConcurrency = *maxConcurrency
			}
			if percent != nil {
				r.run.Tolerance.Percent = *percent
			}
			if count != nil {
				r.run.Tolerance.Count = *count
			}
			r.settingsToRow()
			r.pump()
			row, seq := r.snapshot()
			r.mu.Unlock()
			return r.save(row, seq)
		}
		r.mu.Unlock()
	}
	row, err := rn.host.Executor().MapRunGet(ctx, arn)
	if err != nil {
		return err
	}
	if maxConcurrency != nil {
		row.MaxConcurrency = *maxConcurrency
	}
	if percent != nil {
		row.ToleratedFailurePercentage = *percent
	}
	if count != nil {
		row.ToleratedFailureCount = *count
	}
	return rn.host.Executor().MapRunPut(ctx, row)
}
