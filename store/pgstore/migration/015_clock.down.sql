ALTER TABLE stepwise_schedule DROP COLUMN attempted_at;
ALTER TABLE stepwise_schedule DROP COLUMN attempts;
DROP TABLE stepwise_clock;
