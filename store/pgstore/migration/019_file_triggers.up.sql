-- File-arrival triggers: body is the trigger's settings, JSON text.
CREATE TABLE stepwise_file_trigger (
    name       TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    body       TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- The files a trigger started an execution for: file_key names the file
-- as it was (path or object key, size, modification time or ETag).
CREATE TABLE stepwise_file_arrival (
    trigger_name  TEXT COLLATE "C" NOT NULL,
    file_key      TEXT COLLATE "C" NOT NULL,
    execution_arn TEXT   NOT NULL,
    started_at    BIGINT NOT NULL,
    PRIMARY KEY (trigger_name, file_key)
);
CREATE INDEX stepwise_file_arrival_started ON stepwise_file_arrival (trigger_name, started_at);
