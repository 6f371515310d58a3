CREATE TABLE stepwise_activity (
    arn                      TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    name                     TEXT COLLATE "C" NOT NULL UNIQUE,
    encryption_configuration TEXT   NOT NULL,
    created_at               BIGINT NOT NULL
);
