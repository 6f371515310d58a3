-- The server's own settings (the key of its task tokens, ...).
CREATE TABLE stepwise_meta (
    key   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    value BYTEA NOT NULL
);
