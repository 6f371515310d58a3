-- Back to a row per event. Rows of one event (codec 0) come back as
-- they were; packed rows cannot be unpacked in SQL and are dropped.
CREATE TABLE stepwise_event (
    execution_id BIGINT NOT NULL REFERENCES stepwise_execution (id),
    id           BIGINT NOT NULL,
    type         TEXT   NOT NULL,
    timestamp    BIGINT NOT NULL,
    body         BYTEA  NOT NULL,
    PRIMARY KEY (execution_id, id)
);

INSERT INTO stepwise_event (execution_id, id, type, timestamp, body)
SELECT execution_id, first_id, split_part(h.t, ' ', 2), split_part(h.t, ' ', 1)::bigint,
       substring(body FROM octet_length(split_part(h.t, ' ', 1)) + octet_length(split_part(h.t, ' ', 2)) + 3)
FROM (SELECT execution_id, first_id, body, convert_from(substring(body FROM 1 FOR 200), 'SQL_ASCII') AS t
      FROM stepwise_history WHERE codec = 0) AS h;

DROP TABLE stepwise_history;
