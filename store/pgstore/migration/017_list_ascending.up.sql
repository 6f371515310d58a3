-- The list indexes in ascending order. ListExecutions reads them
-- backwards (newest first) as fast, but a new execution now lands at the
-- end of its range instead of its front, where the B-tree split its pages
-- in two and left them half full: the indexes take about half the space
-- and their inserts less work. A map run's children are listed by their
-- map run only (their state machine is the map run's, which
-- ListExecutions never names), so the state machine's lists leave them
-- out: two fewer index entries a child.
DROP INDEX stepwise_execution_list;
CREATE INDEX stepwise_execution_list
    ON stepwise_execution (state_machine_arn, start_date, arn)
    WHERE map_run_arn = '';
DROP INDEX stepwise_execution_list_status;
CREATE INDEX stepwise_execution_list_status
    ON stepwise_execution (state_machine_arn, status, start_date, arn)
    WHERE map_run_arn = '';
DROP INDEX stepwise_execution_list_version;
CREATE INDEX stepwise_execution_list_version
    ON stepwise_execution (version_arn, start_date, arn)
    WHERE version_arn != '';
DROP INDEX stepwise_execution_list_alias;
CREATE INDEX stepwise_execution_list_alias
    ON stepwise_execution (alias_arn, start_date, arn)
    WHERE alias_arn != '';
DROP INDEX stepwise_execution_list_map_run;
CREATE INDEX stepwise_execution_list_map_run
    ON stepwise_execution (map_run_arn, start_date, arn)
    WHERE map_run_arn != '';
