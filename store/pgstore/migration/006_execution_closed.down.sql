DROP INDEX stepwise_execution_closed;
