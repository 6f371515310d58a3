DROP TABLE stepwise_outbox_cursor;
DROP TABLE stepwise_outbox;
