DROP INDEX stepwise_execution_owner;
DROP TABLE stepwise_activity_queue;
DROP SEQUENCE stepwise_activity_queue_seq;
DROP TABLE stepwise_signal;
