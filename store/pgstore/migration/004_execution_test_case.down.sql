ALTER TABLE stepwise_execution DROP COLUMN test_case;
