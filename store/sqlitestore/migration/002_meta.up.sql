-- The server's own settings (the key of its task tokens, ...).
CREATE TABLE stepwise_meta (
    key   TEXT NOT NULL PRIMARY KEY,
    value BLOB NOT NULL
) STRICT;
