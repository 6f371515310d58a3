-- The failure policies an execution runs with, as its state machine's
-- tags set them when it started: JSON text, '' for none.
ALTER TABLE stepwise_execution ADD COLUMN policies TEXT NOT NULL DEFAULT '';
