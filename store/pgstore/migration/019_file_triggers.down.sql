DROP TABLE stepwise_file_arrival;
DROP TABLE stepwise_file_trigger;
