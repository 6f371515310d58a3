CREATE TABLE stepwise_activity (
    arn                      TEXT    NOT NULL PRIMARY KEY,
    name                     TEXT    NOT NULL UNIQUE,
    encryption_configuration TEXT    NOT NULL,
    created_at               INTEGER NOT NULL
) STRICT;
