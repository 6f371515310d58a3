DROP INDEX stepwise_execution_list_map_run;
ALTER TABLE stepwise_execution DROP COLUMN map_run_arn;
DROP TABLE stepwise_map_run;
