-- The engine's virtual clock (a scaled or skipping clock), one row: its
-- anchor (virtual time at wall-clock time), the ceiling no reading passes
-- (a restart resumes from it) and when a running node last renewed it
-- (0 once stopped).
CREATE TABLE stepwise_clock (
    id             INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    anchor_virtual INTEGER NOT NULL,
    anchor_real    INTEGER NOT NULL,
    ceiling        INTEGER NOT NULL,
    renewed        INTEGER NOT NULL
) STRICT;

-- A schedule's failed attempts at the slot after last_fired, and when the
-- last was made (execution time): its retries go on from there after a
-- restart or on a new leader. Firing the slot clears them.
ALTER TABLE stepwise_schedule ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE stepwise_schedule ADD COLUMN attempted_at INTEGER;
