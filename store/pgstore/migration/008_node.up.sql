-- The servers sharing the database, each with a lease (expires_at, Unix
-- milliseconds of the database's clock) and the epoch it registered with,
-- and the node that owns each running execution, with the epoch it owned
-- it under: the fencing token a step must match.
CREATE TABLE stepwise_node (
    id         TEXT COLLATE "C" PRIMARY KEY,
    epoch      BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

ALTER TABLE stepwise_execution ADD COLUMN owner TEXT COLLATE "C";
ALTER TABLE stepwise_execution ADD COLUMN owner_epoch BIGINT;
