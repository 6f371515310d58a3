-- The records of deployed templates (CloudFormation, SAM and CDK stacks):
-- body is the deployer's own JSON text.
CREATE TABLE stepwise_stack (
    name       TEXT    NOT NULL PRIMARY KEY,
    body       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
