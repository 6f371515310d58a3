-- The tables of servers sharing a database (PostgreSQL's store); one
-- SQLite file has one server, and keeps the same schema version.
CREATE TABLE stepwise_signal (
    id         INTEGER PRIMARY KEY,
    target     TEXT    NOT NULL,
    sender     TEXT    NOT NULL,
    body       BLOB    NOT NULL,
    taken      INTEGER NOT NULL DEFAULT 0,
    reply      BLOB,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE stepwise_activity_queue (
    execution_arn TEXT    NOT NULL,
    task_id       TEXT    NOT NULL,
    activity_arn  TEXT    NOT NULL,
    owner         TEXT    NOT NULL,
    seq           INTEGER NOT NULL,
    PRIMARY KEY (execution_arn, task_id)
) STRICT, WITHOUT ROWID;
