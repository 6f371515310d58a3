-- Published versions of state machines: numbered revisions. A revision is
-- published once (stepwise_version_revision); numbers are never used
-- twice, even after a deletion: last_version is the last number a state
-- machine handed out, and goes away with it. Publishers lock the state
-- machine's row, so that they take turns.
ALTER TABLE stepwise_state_machine ADD COLUMN last_version BIGINT NOT NULL DEFAULT 0;

CREATE TABLE stepwise_version (
    state_machine_arn TEXT COLLATE "C" NOT NULL,
    number            BIGINT NOT NULL,
    revision_id       TEXT COLLATE "C" NOT NULL,
    description       TEXT   NOT NULL,
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (state_machine_arn, number)
);

CREATE UNIQUE INDEX stepwise_version_revision ON stepwise_version (state_machine_arn, revision_id);

-- Aliases: routing is a JSON array of {"version": n, "weight": w}.
CREATE TABLE stepwise_alias (
    state_machine_arn TEXT COLLATE "C" NOT NULL,
    name              TEXT COLLATE "C" NOT NULL,
    description       TEXT   NOT NULL,
    routing           TEXT   NOT NULL,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    PRIMARY KEY (state_machine_arn, name)
);

-- The version and the alias an execution was started on ('' for none).
-- ListExecutions of a version or an alias: the indexes are partial, so
-- that starting an execution on neither costs nothing more; the queries
-- repeat their WHERE clauses word for word.
ALTER TABLE stepwise_execution ADD COLUMN version_arn TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE stepwise_execution ADD COLUMN alias_arn TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX stepwise_execution_list_version
    ON stepwise_execution (version_arn, start_date DESC, arn DESC)
    WHERE version_arn <> '';
CREATE INDEX stepwise_execution_list_alias
    ON stepwise_execution (alias_arn, start_date DESC, arn DESC)
    WHERE alias_arn <> '';
