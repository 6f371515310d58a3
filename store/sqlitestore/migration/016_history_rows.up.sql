-- An execution's history in rows of consecutive events (the events of a
-- step, packed and compressed together; see store/internal/eventpack)
-- instead of a row per event. The events stored so far become rows of
-- one event each (codec 0: the time, the type and the JSON).
CREATE TABLE stepwise_history (
    execution_id INTEGER NOT NULL REFERENCES stepwise_execution (id),
    first_id     INTEGER NOT NULL,
    last_id      INTEGER NOT NULL,
    codec        INTEGER NOT NULL,
    body         BLOB    NOT NULL,
    PRIMARY KEY (execution_id, first_id)
) STRICT;

INSERT INTO stepwise_history (execution_id, first_id, last_id, codec, body)
SELECT execution_id, id, id, 0,
       CAST(CAST(timestamp AS TEXT) || ' ' || type || ' ' || CAST(body AS TEXT) AS BLOB)
FROM stepwise_event;

DROP TABLE stepwise_event;

-- No two rows of an execution share an event: rows do not overlap, so
-- only the last row that starts at or before a new row's last id can
-- reach it (one seek of the key).
CREATE TRIGGER stepwise_history_taken BEFORE INSERT ON stepwise_history
WHEN COALESCE((SELECT o.last_id FROM stepwise_history AS o
               WHERE o.execution_id = NEW.execution_id AND o.first_id <= NEW.last_id
               ORDER BY o.first_id DESC LIMIT 1), 0) >= NEW.first_id
BEGIN
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: stepwise_history event ids');
END;
