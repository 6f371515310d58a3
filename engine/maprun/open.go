package maprun

// AWS keeps at most a number of map runs open at once (the "Open Map
// Runs" quota, 1000 by default): a distributed Map that would open one
// more waits, in a backlog, until another ends. AWS's CloudWatch shows
// the count (ApproximateOpenMapRunCount), the limit (OpenMapRunLimit)
// and the backlog (ApproximateMapRunBacklogSize); the runner keeps the
// same rule for the map runs of its node, and Gauges says the same three.
//
// A run is open from its admission to its end (its unregistering): a run
// dispatched again under the same ARN (its parent rebuilt) holds the
// slot its ARN holds. The backlog is first come, first admitted. While a
// run waits in the backlog its parent's task waits on the outside, as on
// AWS, where the Map state has started and its map run has not.

// DefaultOpenLimit is AWS's default quota of open map runs.
const DefaultOpenLimit = 1000

// Gauges are the runner's open map runs, their limit and its backlog.
type Gauges struct {
	Open, Limit, Backlog int
}

// waiter is a run in the backlog: admitted when ready is closed, given
// up when gone is closed (its task was cancelled while it waited).
type waiter struct {
	arn               string
	parentArn, taskID string
	ready, gone       chan struct{}
}

func (rn *Runner) openLimit() int {
	if rn.cfg.OpenLimit > 0 {
		return rn.cfg.OpenLimit
	}
	return DefaultOpenLimit
}

// Gauges says how many map runs are open, the most that may be, and how
// many wait for one to end.
func (rn *Runner) Gauges() Gauges {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return Gauges{Open: len(rn.open), Limit: rn.openLimit(), Backlog: len(rn.backlog)}
}

// admit opens the run arn, waiting in the backlog while the limit is
// reached; false when the engine stopped first. A nested run (its Map
// runs in a child execution of another map run) is opened at once,
// counted but never queued: its parent run holds a slot and waits on
// it, so queueing it behind runs that wait for that slot would never
// end.
func (rn *Runner) admit(arn string, nested bool, parentArn, taskID string) bool {
	rn.mu.Lock()
	if rn.open[arn] || nested || len(rn.open) < rn.openLimit() && len(rn.backlog) == 0 {
		rn.open[arn] = true
		rn.mu.Unlock()
		return true
	}
	w := waiter{arn: arn, parentArn: parentArn, taskID: taskID, ready: make(chan struct{}), gone: make(chan struct{})}
	rn.backlog = append(rn.backlog, w)
	rn.mu.Unlock()
	select {
	case <-w.ready:
		return true
	case <-w.gone:
		return false
	case <-rn.host.Context().Done():
		rn.mu.Lock()
		defer rn.mu.Unlock()
		for i, o := range rn.backlog {
			if o.ready == w.ready {
				rn.backlog = append(rn.backlog[:i], rn.backlog[i+1:]...)
				return false
			}
		}
		// Admitted meanwhile: the slot goes to the next.
		rn.closeLocked(arn)
		return false
	}
}

// closeLocked ends the run arn's hold on its slot and admits from the
// backlog. rn.mu is held.
func (rn *Runner) closeLocked(arn string) {
	delete(rn.open, arn)
	for len(rn.backlog) > 0 {
		w := rn.backlog[0]
		if !rn.open[w.arn] && len(rn.open) >= rn.openLimit() {
			return
		}
		rn.backlog = rn.backlog[1:]
		rn.open[w.arn] = true
		close(w.ready)
	}
}

// dropWaiterLocked takes a cancelled task's run out of the backlog; false when
// it is not there. rn.mu is held.
func (rn *Runner) dropWaiterLocked(parentArn, taskID string) bool {
	for i, w := range rn.backlog {
		if w.parentArn == parentArn && w.taskID == taskID {
			rn.backlog = append(rn.backlog[:i], rn.backlog[i+1:]...)
			close(w.gone)
			return true
		}
	}
	return false
}
