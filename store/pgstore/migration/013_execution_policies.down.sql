ALTER TABLE stepwise_execution DROP COLUMN policies;
