-- The records of deployed templates (CloudFormation, SAM and CDK stacks):
-- body is the deployer's own JSON text.
CREATE TABLE stepwise_stack (
    name       TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    body       TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
