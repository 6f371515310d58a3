-- Times are BIGINT unix milliseconds, UTC, as in the SQLite schema. Text
-- that is compared or sorted (ARNs, names, ids, keys) is COLLATE "C", so
-- that it orders by bytes, as SQLite does, whatever the database's locale.

-- A state machine's current row; its definition lives in its revisions.
CREATE TABLE stepwise_state_machine (
    arn                      TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    name                     TEXT COLLATE "C" NOT NULL UNIQUE,
    type                     TEXT   NOT NULL,
    status                   TEXT   NOT NULL,
    revision_id              TEXT   NOT NULL,
    role_arn                 TEXT   NOT NULL,
    description              TEXT   NOT NULL,
    logging_configuration    TEXT   NOT NULL,
    tracing_configuration    TEXT   NOT NULL,
    encryption_configuration TEXT   NOT NULL,
    created_at               BIGINT NOT NULL,
    updated_at               BIGINT NOT NULL
);

-- Revisions outlive their state machine: executions keep pointing at them.
CREATE TABLE stepwise_state_machine_revision (
    state_machine_arn TEXT COLLATE "C" NOT NULL,
    revision_id       TEXT COLLATE "C" NOT NULL,
    definition        TEXT   NOT NULL,
    role_arn          TEXT   NOT NULL,
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (state_machine_arn, revision_id)
);

-- id is a short key for the history and the replay log, whose rows would
-- otherwise each carry the ARN twice (row and index).
CREATE TABLE stepwise_execution (
    id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    arn               TEXT COLLATE "C" NOT NULL UNIQUE,
    state_machine_arn TEXT COLLATE "C" NOT NULL,
    revision_id       TEXT   NOT NULL,
    name              TEXT   NOT NULL,
    status            TEXT   NOT NULL,
    input             TEXT   NOT NULL,
    output            TEXT,
    error             TEXT,
    cause             TEXT,
    start_date        BIGINT NOT NULL,
    stop_date         BIGINT,
    role_arn          TEXT   NOT NULL,
    trace_header      TEXT   NOT NULL,
    redrive_count     BIGINT NOT NULL,
    redrive_date      BIGINT,
    version           BIGINT NOT NULL,
    last_event_id     BIGINT NOT NULL
);

-- ListExecutions: newest first, with and without a status filter.
CREATE INDEX stepwise_execution_list
    ON stepwise_execution (state_machine_arn, start_date DESC, arn DESC);
CREATE INDEX stepwise_execution_list_status
    ON stepwise_execution (state_machine_arn, status, start_date DESC, arn DESC);
-- Recovery after a restart: the RUNNING executions, by ARN.
CREATE INDEX stepwise_execution_running
    ON stepwise_execution (arn) WHERE status = 'RUNNING';

CREATE TABLE stepwise_event (
    execution_id BIGINT NOT NULL REFERENCES stepwise_execution (id),
    id           BIGINT NOT NULL,
    type         TEXT   NOT NULL,
    timestamp    BIGINT NOT NULL,
    body         BYTEA  NOT NULL,
    PRIMARY KEY (execution_id, id)
);

-- The replay log.
CREATE TABLE stepwise_input (
    execution_id BIGINT NOT NULL REFERENCES stepwise_execution (id),
    seq          BIGINT NOT NULL,
    at           BIGINT NOT NULL,
    body         BYTEA  NOT NULL,
    PRIMARY KEY (execution_id, seq)
);

CREATE TABLE stepwise_timer (
    execution_arn TEXT COLLATE "C" NOT NULL REFERENCES stepwise_execution (arn),
    id            TEXT COLLATE "C" NOT NULL,
    fire_at       BIGINT NOT NULL,
    PRIMARY KEY (execution_arn, id)
);

CREATE INDEX stepwise_timer_fire_at ON stepwise_timer (fire_at, execution_arn, id);

CREATE TABLE stepwise_task (
    execution_arn TEXT COLLATE "C" NOT NULL REFERENCES stepwise_execution (arn),
    id            TEXT COLLATE "C" NOT NULL,
    resource      TEXT   NOT NULL,
    body          BYTEA  NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (execution_arn, id)
);

CREATE TABLE stepwise_tag (
    resource_arn TEXT COLLATE "C" NOT NULL,
    key          TEXT COLLATE "C" NOT NULL,
    value        TEXT NOT NULL,
    PRIMARY KEY (resource_arn, key)
);
