-- Map items: the items an ItemReader read for a map run (its spool), one
-- row per item by its index in the run, the item as JSON text. They go
-- with their map run: deleting the execution that started the run
-- deletes them.
CREATE TABLE stepwise_map_item (
    map_run_arn TEXT COLLATE "C" NOT NULL,
    idx         BIGINT NOT NULL,
    body        TEXT   NOT NULL,
    PRIMARY KEY (map_run_arn, idx)
);
