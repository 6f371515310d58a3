DROP TABLE stepwise_tag;
DROP TABLE stepwise_task;
DROP TABLE stepwise_timer;
DROP TABLE stepwise_input;
DROP TABLE stepwise_event;
DROP TABLE stepwise_execution;
DROP TABLE stepwise_state_machine_revision;
DROP TABLE stepwise_state_machine;
