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
