DROP TABLE stepwise_schedule;
DROP TABLE stepwise_schedule_group;
