-- Back to a row per event. Rows of one event (codec 0) come back as
-- they were; packed rows cannot be unpacked in SQL and are dropped.
CREATE TABLE stepwise_event (
    execution_id INTEGER NOT NULL REFERENCES stepwise_execution (id),
    id           INTEGER NOT NULL,
    type         TEXT    NOT NULL,
    timestamp    INTEGER NOT NULL,
    body         BLOB    NOT NULL,
    PRIMARY KEY (execution_id, id)
) STRICT;

INSERT INTO stepwise_event (execution_id, id, type, timestamp, body)
SELECT execution_id, first_id,
       substr(rest, 1, instr(rest, ' ') - 1),
       CAST(substr(t, 1, instr(t, ' ') - 1) AS INTEGER),
       CAST(substr(rest, instr(rest, ' ') + 1) AS BLOB)
FROM (SELECT execution_id, first_id, CAST(body AS TEXT) AS t,
             substr(CAST(body AS TEXT), instr(CAST(body AS TEXT), ' ') + 1) AS rest
      FROM stepwise_history WHERE codec = 0);

DROP TABLE stepwise_history;
