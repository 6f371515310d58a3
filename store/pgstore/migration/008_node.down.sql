ALTER TABLE stepwise_execution DROP COLUMN owner_epoch;
ALTER TABLE stepwise_execution DROP COLUMN owner;
DROP TABLE stepwise_node;
