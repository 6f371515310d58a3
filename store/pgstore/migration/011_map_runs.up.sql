-- Map runs: the runs of distributed Map states. They go with the
-- execution whose Map state started them (execution_arn): deleting the
-- execution deletes them. item_counts and execution_counts are JSON
-- objects, as DescribeMapRun returns them.
CREATE TABLE stepwise_map_run (
    arn                          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    execution_arn                TEXT COLLATE "C" NOT NULL,
    state_machine_arn            TEXT COLLATE "C" NOT NULL,
    status                       TEXT   NOT NULL,
    start_date                   BIGINT NOT NULL,
    stop_date                    BIGINT,
    max_concurrency              BIGINT NOT NULL,
    tolerated_failure_count      BIGINT NOT NULL,
    tolerated_failure_percentage DOUBLE PRECISION NOT NULL,
    item_counts                  TEXT   NOT NULL,
    execution_counts             TEXT   NOT NULL,
    redrive_count                BIGINT NOT NULL,
    redrive_date                 BIGINT
);

-- ListMapRuns: an execution's map runs in the order they started; and
-- their deletion with the execution.
CREATE INDEX stepwise_map_run_list ON stepwise_map_run (execution_arn, start_date, arn);

-- The map run that started an execution ('' for none). ListExecutions of
-- a map run: the index is partial, so that an execution started
-- otherwise costs nothing more; the query repeats its WHERE clause word
-- for word.
ALTER TABLE stepwise_execution ADD COLUMN map_run_arn TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX stepwise_execution_list_map_run
    ON stepwise_execution (map_run_arn, start_date DESC, arn DESC)
    WHERE map_run_arn <> '';
