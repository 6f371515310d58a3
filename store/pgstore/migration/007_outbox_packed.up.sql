-- A row of the outbox holds the notices of one transaction of steps
-- (they share its id): `notices` of them, each a varint of its creation
-- time in Unix milliseconds, a uvarint of its length and its bytes. Rows
-- written before hold one notice, as it is (notices = 0).
ALTER TABLE stepwise_outbox ADD COLUMN notices BIGINT NOT NULL DEFAULT 0;
