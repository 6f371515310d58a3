-- The engine's virtual clock (a scaled or skipping clock), one row: its
-- anchor (virtual time at wall-clock time), the ceiling no reading passes
-- (a restart resumes from it) and when a running node last renewed it
-- (0 once stopped).
CREATE TABLE stepwise_clock (
    id             INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    anchor_virtual BIGINT  NOT NULL,
    anchor_real    BIGINT  NOT NULL,
    ceiling        BIGINT  NOT NULL,
    renewed        BIGINT  NOT NULL
);
