DROP TABLE stepwise_meta;
