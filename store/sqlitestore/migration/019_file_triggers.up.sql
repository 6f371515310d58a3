-- File-arrival triggers: body is the trigger's settings, JSON text.
CREATE TABLE stepwise_file_trigger (
    name       TEXT    NOT NULL PRIMARY KEY,
    body       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- The files a trigger started an execution for: file_key names the file
-- as it was (path or object key, size, modification time or ETag).
CREATE TABLE stepwise_file_arrival (
    trigger_name  TEXT    NOT NULL,
    file_key      TEXT    NOT NULL,
    execution_arn TEXT    NOT NULL,
    started_at    INTEGER NOT NULL,
    PRIMARY KEY (trigger_name, file_key)
) STRICT;
CREATE INDEX stepwise_file_arrival_started ON stepwise_file_arrival (trigger_name, started_at);
