-- What the servers sharing the database ask of one another: requests to
-- the node that owns an execution (signals), answered in the same row, and
-- the activity tasks waiting for a worker on any node, oldest first (with
-- the node that queued them, whose pollers take them first).
CREATE TABLE stepwise_signal (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    target     TEXT COLLATE "C" NOT NULL,
    sender     TEXT COLLATE "C" NOT NULL,
    body       BYTEA NOT NULL,
    taken      BOOLEAN NOT NULL DEFAULT false,
    reply      BYTEA,
    created_at BIGINT NOT NULL
);
CREATE INDEX stepwise_signal_waiting ON stepwise_signal (target, id) WHERE NOT taken;

CREATE TABLE stepwise_activity_queue (
    execution_arn TEXT COLLATE "C" NOT NULL,
    task_id       TEXT COLLATE "C" NOT NULL,
    activity_arn  TEXT COLLATE "C" NOT NULL,
    owner         TEXT COLLATE "C" NOT NULL,
    seq           BIGINT NOT NULL,
    PRIMARY KEY (execution_arn, task_id)
);
CREATE SEQUENCE stepwise_activity_queue_seq;
CREATE INDEX stepwise_activity_queue_next ON stepwise_activity_queue (activity_arn, seq);
CREATE INDEX stepwise_activity_queue_owned ON stepwise_activity_queue (activity_arn, owner, seq);

-- The running executions of a node, which it releases when it stops.
CREATE INDEX stepwise_execution_owner ON stepwise_execution (owner, owner_epoch) WHERE status = 'RUNNING';
