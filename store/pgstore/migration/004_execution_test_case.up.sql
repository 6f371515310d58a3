-- The mock test case an execution runs with (StartExecution of
-- "<stateMachineArn>#<TestCase>"); '' for a real run.
ALTER TABLE stepwise_execution ADD COLUMN test_case TEXT NOT NULL DEFAULT '';
