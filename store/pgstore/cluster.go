package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
)

var _ store.Cluster = (*Driver)(nil)

const (
	executionOwnerSQL = `SELECT e.owner, e.owner_epoch, coalesce(n.expires_at > ` + nowMS + `, false), e.status = 'RUNNING'
FROM stepwise_execution AS e LEFT JOIN stepwise_node AS n ON n.id = e.owner AND n.epoch = e.owner_epoch
WHERE e.arn = $1`
	// One execution is claimed as ExecutionClaim claims orphans, or when
	// it is not running (a redrive makes it run on its claimer), checked
	// on the row as it is once locked.
	// One the node owns already, running, is its own as it is: its
	// version stays, or the node's own live copy would be refused.
	executionClaimOneSQL = `
WITH claimed AS (
    UPDATE stepwise_execution AS e SET owner = $1, owner_epoch = $2, version = version + 1
    WHERE e.arn = $3 AND (e.status <> 'RUNNING' OR ` + noLiveOwner + `)
    RETURNING arn
)
SELECT EXISTS (SELECT 1 FROM claimed)
    OR EXISTS (SELECT 1 FROM stepwise_execution WHERE arn = $3 AND status = 'RUNNING' AND owner = $1 AND owner_epoch = $2)`

	signalSendSQL = `WITH s AS (
    INSERT INTO stepwise_signal (target, sender, body, created_at) VALUES ($1, $2, $3, ` + nowMS + `) RETURNING id
)
SELECT id, pg_notify('` + store.ChannelSignal + `', $1) FROM s`
	signalTakeSQL = `UPDATE stepwise_signal SET taken = true WHERE id IN (
    SELECT id FROM stepwise_signal WHERE target = $1 AND NOT taken ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
RETURNING id, sender, body`
	signalAnswerSQL = `WITH s AS (UPDATE stepwise_signal SET reply = $2 WHERE id = $1 RETURNING id)
SELECT pg_notify('` + store.ChannelReply + `', id::text) FROM s`
	signalResultSQL   = `DELETE FROM stepwise_signal WHERE id = $1 AND reply IS NOT NULL RETURNING reply`
	signalExistsSQL   = `SELECT 1 FROM stepwise_signal WHERE id = $1`
	signalWithdrawSQL = `DELETE FROM stepwise_signal WHERE id = $1 AND NOT taken`
	signalSweepSQL    = `DELETE FROM stepwise_signal WHERE created_at < ` + nowMS + ` - $1`

	activityEnqueueSQL = `WITH q AS (
    INSERT INTO stepwise_activity_queue (execution_arn, task_id, activity_arn, owner, seq)
    SELECT t.execution_arn, t.task_id, t.activity_arn, t.owner,
           CASE WHEN t.front THEN coalesce((SELECT min(seq) FROM stepwise_activity_queue AS o WHERE o.activity_arn = t.activity_arn), 0) - 1
                ELSE nextval('stepwise_activity_queue_seq') END
    FROM unnest($1::text[], $2::text[], $3::text[], $4::bool[], $5::text[]) WITH ORDINALITY AS t (execution_arn, task_id, activity_arn, front, owner, n)
    ORDER BY t.n
    ON CONFLICT DO NOTHING
)
SELECT pg_notify('` + store.ChannelActivity + `', a.arn || E'\n' || a.n) FROM (
    SELECT arn, count(*) AS n FROM unnest($3::text[]) AS arn GROUP BY arn) AS a`
	// A node's pollers take the tasks their node queued first: their
	// hand-out and answer are recorded without asking another node. Up
	// to $3 tasks are taken at once, for as many pollers.
	activityTakeSQL = `WITH mine AS (
    SELECT execution_arn, task_id, seq FROM stepwise_activity_queue WHERE activity_arn = $1 AND owner = $2
    ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED
), other AS (
    SELECT execution_arn, task_id, seq FROM stepwise_activity_queue WHERE activity_arn = $1 AND owner <> $2
    ORDER BY seq LIMIT greatest($3 - (SELECT count(*) FROM mine), 0) FOR UPDATE SKIP LOCKED
), taken AS (
    DELETE FROM stepwise_activity_queue WHERE (execution_arn, task_id) IN (SELECT execution_arn, task_id FROM mine UNION ALL SELECT execution_arn, task_id FROM other)
    RETURNING execution_arn, task_id, owner = $2 AS own, seq
)
SELECT execution_arn, task_id FROM taken ORDER BY own DESC, seq`
	activityDequeueSQL = `DELETE FROM stepwise_activity_queue WHERE execution_arn = $1 AND task_id = $2`
	activityQueuedSQL  = `SELECT count(*) FROM stepwise_activity_queue WHERE activity_arn = $1`
)

// ExecutionOwner says who owns an execution.
func (d *Driver) ExecutionOwner(ctx context.Context, arn string) (store.Ownership, error) {
	var o store.Ownership
	var owner *string
	var epoch *int64
	err := d.pool.QueryRow(ctx, executionOwnerSQL, arn).Scan(&owner, &epoch, &o.Live, &o.Running)
	if owner != nil && epoch != nil {
		o.Owner = store.Fence{Node: *owner, Epoch: *epoch}
	}
	return o, interpretError("owner of execution "+arn, err)
}

// ExecutionClaimOne makes an orphaned or ended execution f's own.
func (d *Driver) ExecutionClaimOne(ctx context.Context, f store.Fence, arn string) (bool, error) {
	var claimed bool
	err := d.exec.inTx(ctx, func(q querier) error {
		if err := d.exec.ClaimLock(ctx, pgQuerier{q}); err != nil {
			return err
		}
		if err := d.exec.NodeLive(ctx, pgQuerier{q}, f); err != nil {
			return err
		}
		return q.QueryRow(ctx, executionClaimOneSQL, f.Node, f.Epoch, arn).Scan(&claimed)
	})
	return claimed, interpretError("claim execution "+arn, err)
}

// SignalSend queues a request for node to and wakes it.
func (d *Driver) SignalSend(ctx context.Context, sender, to string, body []byte) (int64, error) {
	var id int64
	var notified any
	err := d.pool.QueryRow(ctx, signalSendSQL, to, sender, body).Scan(&id, &notified)
	return id, interpretError("send a request to node "+to, err)
}

// SignalTake takes the requests for node to.
func (d *Driver) SignalTake(ctx context.Context, to string, limit int) ([]store.Signal, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("take requests: limit %d must be positive", limit)
	}
	sigs, err := queryAll(ctx, d.pool, signalTakeSQL, []any{to, limit}, func(r sqlcore.Scanner) (store.Signal, error) {
		var s store.Signal
		return s, r.Scan(&s.ID, &s.Sender, &s.Body)
	})
	return sigs, interpretError("take requests for node "+to, err)
}

// SignalAnswer writes a request's answer and wakes its sender.
func (d *Driver) SignalAnswer(ctx context.Context, id int64, reply []byte) error {
	if reply == nil {
		reply = []byte{}
	}
	rows, err := d.pool.Query(ctx, signalAnswerSQL, id, reply)
	if err == nil {
		rows.Close()
		err = rows.Err()
	}
	return interpretError(fmt.Sprintf("answer request %d", id), err)
}

// SignalResult returns a request's answer once there is one.
func (d *Driver) SignalResult(ctx context.Context, id int64) ([]byte, bool, error) {
	var reply []byte
	err := d.pool.QueryRow(ctx, signalResultSQL, id).Scan(&reply)
	if errors.Is(err, pgx.ErrNoRows) {
		var one int
		err = d.pool.QueryRow(ctx, signalExistsSQL, id).Scan(&one)
		if err == nil {
			return nil, false, nil
		}
	}
	if err != nil {
		return nil, false, interpretError(fmt.Sprintf("answer of request %d", id), err)
	}
	return reply, true, nil
}

// SignalWithdraw deletes a request no one took.
func (d *Driver) SignalWithdraw(ctx context.Context, id int64) (bool, error) {
	tag, err := d.pool.Exec(ctx, signalWithdrawSQL, id)
	if err != nil {
		return false, interpretError(fmt.Sprintf("withdraw request %d", id), err)
	}
	return tag.RowsAffected() == 1, nil
}

// SignalSweep deletes old requests.
func (d *Driver) SignalSweep(ctx context.Context, age time.Duration) error {
	_, err := d.pool.Exec(ctx, signalSweepSQL, age.Milliseconds())
	return interpretError("sweep requests", err)
}

// ActivityEnqueue queues activity tasks once and wakes the nodes.
func (d *Driver) ActivityEnqueue(ctx context.Context, tasks []store.QueuedTask) error {
	if len(tasks) == 0 {
		return nil
	}
	arns, ids, acts, owners := make([]string, len(tasks)), make([]string, len(tasks)), make([]string, len(tasks)), make([]string, len(tasks))
	fronts := make([]bool, len(tasks))
	for i, t := range tasks {
		arns[i], ids[i], acts[i], fronts[i], owners[i] = t.ExecutionArn, t.TaskID, t.ActivityArn, t.Front, t.Owner
	}
	rows, err := d.pool.Query(ctx, activityEnqueueSQL, arns, ids, acts, fronts, owners)
	if err == nil {
		rows.Close()
		err = rows.Err()
	}
	return interpretError(fmt.Sprintf("queue %d activity tasks", len(tasks)), err)
}

// ActivityTake takes the oldest task of an activity a node queued, or of
// all.
func (d *Driver) ActivityTake(ctx context.Context, activityArn, node string) (string, string, bool, error) {
	tasks, err := d.ActivityTakeMany(ctx, activityArn, node, 1)
	if err != nil || len(tasks) == 0 {
		return "", "", false, err
	}
	return tasks[0].ExecutionArn, tasks[0].TaskID, true, nil
}

// ActivityTakeMany takes up to n of the oldest tasks of an activity, those
// a node queued first.
//
// The take is planned without sequential scans, in a transaction of its
// own sent in one round trip: the queue is short but churns, so the
// planner, told by the statistics that it is nearly empty, would scan it
// whole (twice, and once more for the delete) at every take, across
// every page its deleted rows left until the next vacuum, where the
// indexes find the oldest task at once. Its commit waits for the WAL to
// be flushed, once for the n tasks.
func (d *Driver) ActivityTakeMany(ctx context.Context, activityArn, node string, n int) ([]store.QueuedTask, error) {
	if n <= 0 {
		return nil, fmt.Errorf("take tasks of activity %s: count %d must be positive", activityArn, n)
	}
	// No row is no error here: pgx forgets the batch's prepared
	// statements on any error, and most takes of idle pollers find none.
	var tasks []store.QueuedTask
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SET LOCAL enable_seqscan = off`)
	b.Queue(activityTakeSQL, activityArn, node, n).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			t := store.QueuedTask{ActivityArn: activityArn}
			if err := rows.Scan(&t.ExecutionArn, &t.TaskID); err != nil {
				return err
			}
			tasks = append(tasks, t)
		}
		return rows.Err()
	})
	b.Queue(`COMMIT`)
	if err := d.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, interpretError("take tasks of activity "+activityArn, err)
	}
	return tasks, nil
}

// ActivityDequeue removes a queued task.
func (d *Driver) ActivityDequeue(ctx context.Context, executionArn, taskID string) error {
	_, err := d.pool.Exec(ctx, activityDequeueSQL, executionArn, taskID)
	return interpretError("remove activity task "+taskID+" of "+executionArn, err)
}

// ActivityQueued counts an activity's queued tasks.
func (d *Driver) ActivityQueued(ctx context.Context, activityArn string) (int, error) {
	var n int
	err := d.pool.QueryRow(ctx, activityQueuedSQL, activityArn).Scan(&n)
	return n, interpretError("count the tasks of activity "+activityArn, err)
}

// NodeLive says whether a node has a live lease.
func (d *Driver) NodeLive(ctx context.Context, node string) (bool, error) {
	var live bool
	err := d.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM stepwise_node WHERE id = $1 AND expires_at > `+nowMS+`)`, node).Scan(&live)
	return live, interpretError("lease of node "+node, err)
}

// NodeLeader returns the live node with the smallest id.
func (d *Driver) NodeLeader(ctx context.Context) (string, error) {
	var id string
	err := d.pool.QueryRow(ctx, `SELECT id FROM stepwise_node WHERE expires_at > `+nowMS+` ORDER BY id LIMIT 1`).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return id, interpretError("leader node", err)
}

// Notify wakes the listeners of a channel.
func (d *Driver) Notify(ctx context.Context, channel, payload string) error {
	_, err := d.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload)
	return interpretError("notify "+channel, err)
}

// Listen calls fn with the wake-ups of channels, on a connection of its
// own taken out of the pool, until ctx ends or the connection fails.
func (d *Driver) Listen(ctx context.Context, channels []string, fn func(channel, payload string)) error {
	pc, err := d.pool.Acquire(ctx)
	if err != nil {
		return interpretError("listen", err)
	}
	// A listening session stays out of the pool and ends with Listen.
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return interpretError("listen "+ch, err)
		}
	}
	fn("", "")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return interpretError("listen", err)
		}
		fn(n.Channel, n.Payload)
	}
}
