DROP TABLE stepwise_activity;
