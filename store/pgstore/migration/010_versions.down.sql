DROP INDEX stepwise_execution_list_alias;
DROP INDEX stepwise_execution_list_version;
ALTER TABLE stepwise_execution DROP COLUMN alias_arn;
ALTER TABLE stepwise_execution DROP COLUMN version_arn;
DROP TABLE stepwise_alias;
DROP TABLE stepwise_version;
ALTER TABLE stepwise_state_machine DROP COLUMN last_version;
