-- Published versions of state machines: numbered revisions. A revision is
-- published once (stepwise_version_revision); numbers are never used
-- twice, even after a deletion: last_version is the last number a state
-- machine handed out, and goes away with it.
ALTER TABLE stepwise_state_machine ADD COLUMN last_version INTEGER NOT NULL DEFAULT 0;

CREATE TABLE stepwise_version (
    state_machine_arn TEXT    NOT NULL,
    number            INTEGER NOT NULL,
    revision_id       TEXT    NOT NULL,
    description       TEXT    NOT NULL,
    created_at        INTEGER NOT NULL,
    PRIMARY KEY (state_machine_arn, number)
) STRICT, WITHOUT ROWID;

CREATE UNIQUE INDEX stepwise_version_revision ON stepwise_version (state_machine_arn, revision_id);

-- Aliases: routing is a JSON array of {"version": n, "weight": w}.
CREATE TABLE stepwise_alias (
    state_machine_arn TEXT    NOT NULL,
    name              TEXT    NOT NULL,
    description       TEXT    NOT NULL,
    routing           TEXT    NOT NULL,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    PRIMARY KEY (state_machine_arn, name)
) STRICT, WITHOUT ROWID;

-- The version and the alias an execution was started on ('' for none).
-- ListExecutions of a version or an alias: the indexes are partial, so
-- that starting an execution on neither costs nothing more; the queries
-- repeat their WHERE clauses word for word.
ALTER TABLE stepwise_execution ADD COLUMN version_arn TEXT NOT NULL DEFAULT '';
ALTER TABLE stepwise_execution ADD COLUMN alias_arn TEXT NOT NULL DEFAULT '';
CREATE INDEX stepwise_execution_list_version
    ON stepwise_execution (version_arn, start_date DESC, arn DESC)
    WHERE version_arn != '';
CREATE INDEX stepwise_execution_list_alias
    ON stepwise_execution (alias_arn, start_date DESC, arn DESC)
    WHERE alias_arn != '';
