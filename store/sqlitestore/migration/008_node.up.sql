-- The servers sharing the database, each with a lease (expires_at, Unix
-- milliseconds) and the epoch it registered with, and the node that owns
-- each running execution, with the epoch it owned it under: the fencing
-- token a step must match.
CREATE TABLE stepwise_node (
    id         TEXT    PRIMARY KEY,
    epoch      INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

ALTER TABLE stepwise_execution ADD COLUMN owner TEXT;
ALTER TABLE stepwise_execution ADD COLUMN owner_epoch INTEGER;
