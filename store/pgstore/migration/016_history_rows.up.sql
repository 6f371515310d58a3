-- An execution's history in rows of consecutive events (the events of a
-- step, packed and compressed together; see store/internal/eventpack)
-- instead of a row per event. The events stored so far become rows of
-- one event each (codec 0: the time, the type and the JSON).
CREATE TABLE stepwise_history (
    execution_id BIGINT NOT NULL REFERENCES stepwise_execution (id),
    first_id     BIGINT NOT NULL,
    last_id      BIGINT NOT NULL,
    codec        BIGINT NOT NULL,
    body         BYTEA  NOT NULL,
    PRIMARY KEY (execution_id, first_id)
);

INSERT INTO stepwise_history (execution_id, first_id, last_id, codec, body)
SELECT execution_id, id, id, 0,
       convert_to(timestamp::text || ' ' || type || ' ', 'UTF8') || body
FROM stepwise_event;

DROP TABLE stepwise_event;
