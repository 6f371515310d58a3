DROP TABLE stepwise_clock;
