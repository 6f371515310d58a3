-- Retention: the ended executions, by stop date. The WHERE clause is
-- repeated word for word by the query that uses the index.
CREATE INDEX stepwise_execution_closed
    ON stepwise_execution (stop_date)
    WHERE status IN ('SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED');
