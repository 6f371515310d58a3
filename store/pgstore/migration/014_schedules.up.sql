-- EventBridge Scheduler schedule groups and schedules (scheduler/).
CREATE TABLE stepwise_schedule_group (
    name         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    arn          TEXT   NOT NULL,
    client_token TEXT   NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);

-- body: the schedule's settings as the scheduler keeps them (JSON text);
-- last_fired: the last slot fired or dropped, NULL before the first.
CREATE TABLE stepwise_schedule (
    group_name   TEXT COLLATE "C" NOT NULL,
    name         TEXT COLLATE "C" NOT NULL,
    state        TEXT   NOT NULL,
    body         TEXT   NOT NULL,
    client_token TEXT   NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    last_fired   BIGINT,
    PRIMARY KEY (group_name, name)
);
