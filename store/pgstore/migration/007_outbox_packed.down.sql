-- Rows of several notices cannot be read by the earlier schema.
DELETE FROM stepwise_outbox WHERE notices > 0;
ALTER TABLE stepwise_outbox DROP COLUMN notices;
