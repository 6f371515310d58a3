-- Times are INTEGER unix milliseconds, UTC. Tables are STRICT so a wrongly
-- typed value is an error, not a silent conversion.

-- A state machine's current row; its definition lives in its revisions.
CREATE TABLE stepwise_state_machine (
    arn                      TEXT    NOT NULL PRIMARY KEY,
    name                     TEXT    NOT NULL UNIQUE,
    type                     TEXT    NOT NULL,
    status                   TEXT    NOT NULL,
    revision_id              TEXT    NOT NULL,
    role_arn                 TEXT    NOT NULL,
    description              TEXT    NOT NULL,
    logging_configuration    TEXT    NOT NULL,
    tracing_configuration    TEXT    NOT NULL,
    encryption_configuration TEXT    NOT NULL,
    created_at               INTEGER NOT NULL,
    updated_at               INTEGER NOT NULL
) STRICT;

-- Revisions outlive their state machine: executions keep pointing at them.
CREATE TABLE stepwise_state_machine_revision (
    state_machine_arn TEXT    NOT NULL,
    revision_id       TEXT    NOT NULL,
    definition        TEXT    NOT NULL,
    role_arn          TEXT    NOT NULL,
    created_at        INTEGER NOT NULL,
    PRIMARY KEY (state_machine_arn, revision_id)
) STRICT;

-- id is a short key for the history and the replay log, whose rows would
-- otherwise each carry the ARN twice (row and index): that tripled the
-- pages a group commit writes.
CREATE TABLE stepwise_execution (
    id                INTEGER PRIMARY KEY,
    arn               TEXT    NOT NULL UNIQUE,
    state_machine_arn TEXT    NOT NULL,
    revision_id       TEXT    NOT NULL,
    name              TEXT    NOT NULL,
    status            TEXT    NOT NULL,
    input             TEXT    NOT NULL,
    output            TEXT,
    error             TEXT,
    cause             TEXT,
    start_date        INTEGER NOT NULL,
    stop_date         INTEGER,
    role_arn          TEXT    NOT NULL,
    trace_header      TEXT    NOT NULL,
    redrive_count     INTEGER NOT NULL,
    redrive_date      INTEGER,
    version           INTEGER NOT NULL,
    last_event_id     INTEGER NOT NULL
) STRICT;

-- ListExecutions: newest first, with and without a status filter.
CREATE INDEX stepwise_execution_list
    ON stepwise_execution (state_machine_arn, start_date DESC, arn DESC);
CREATE INDEX stepwise_execution_list_status
    ON stepwise_execution (state_machine_arn, status, start_date DESC, arn DESC);
-- Recovery after a restart: the RUNNING executions, by ARN.
CREATE INDEX stepwise_execution_running
    ON stepwise_execution (arn) WHERE status = 'RUNNING';

-- Rowid tables, so that a commit appends rows at the end and only the
-- small (execution_id, id) index takes inserts in the middle.
CREATE TABLE stepwise_event (
    execution_id INTEGER NOT NULL REFERENCES stepwise_execution (id),
    id           INTEGER NOT NULL,
    type         TEXT    NOT NULL,
    timestamp    INTEGER NOT NULL,
    body         BLOB    NOT NULL,
    PRIMARY KEY (execution_id, id)
) STRICT;

-- The replay log.
CREATE TABLE stepwise_input (
    execution_id INTEGER NOT NULL REFERENCES stepwise_execution (id),
    seq          INTEGER NOT NULL,
    at           INTEGER NOT NULL,
    body         BLOB    NOT NULL,
    PRIMARY KEY (execution_id, seq)
) STRICT;

CREATE TABLE stepwise_timer (
    execution_arn TEXT    NOT NULL REFERENCES stepwise_execution (arn),
    id            TEXT    NOT NULL,
    fire_at       INTEGER NOT NULL,
    PRIMARY KEY (execution_arn, id)
) STRICT, WITHOUT ROWID;

CREATE INDEX stepwise_timer_fire_at ON stepwise_timer (fire_at, execution_arn, id);

CREATE TABLE stepwise_task (
    execution_arn TEXT    NOT NULL REFERENCES stepwise_execution (arn),
    id            TEXT    NOT NULL,
    resource      TEXT    NOT NULL,
    body          BLOB    NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (execution_arn, id)
) STRICT;

CREATE TABLE stepwise_tag (
    resource_arn TEXT NOT NULL,
    key          TEXT NOT NULL,
    value        TEXT NOT NULL,
    PRIMARY KEY (resource_arn, key)
) STRICT, WITHOUT ROWID;
