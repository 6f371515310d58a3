DROP TABLE stepwise_activity_queue;
DROP TABLE stepwise_signal;
