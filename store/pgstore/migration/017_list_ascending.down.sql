DROP INDEX stepwise_execution_list;
CREATE INDEX stepwise_execution_list
    ON stepwise_execution (state_machine_arn, start_date DESC, arn DESC);
DROP INDEX stepwise_execution_list_status;
CREATE INDEX stepwise_execution_list_status
    ON stepwise_execution (state_machine_arn, status, start_date DESC, arn DESC);
DROP INDEX stepwise_execution_list_version;
CREATE INDEX stepwise_execution_list_version
    ON stepwise_execution (version_arn, start_date DESC, arn DESC)
    WHERE version_arn != '';
DROP INDEX stepwise_execution_list_alias;
CREATE INDEX stepwise_execution_list_alias
    ON stepwise_execution (alias_arn, start_date DESC, arn DESC)
    WHERE alias_arn != '';
DROP INDEX stepwise_execution_list_map_run;
CREATE INDEX stepwise_execution_list_map_run
    ON stepwise_execution (map_run_arn, start_date DESC, arn DESC)
    WHERE map_run_arn != '';
