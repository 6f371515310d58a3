DROP TABLE stepwise_map_item;
