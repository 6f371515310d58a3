DROP TABLE stepwise_stack;
