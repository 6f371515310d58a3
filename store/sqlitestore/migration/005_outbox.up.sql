-- Notices of status changes, written with the step that made them and
-- delivered after; each destination's cursor is the last one it took.
CREATE TABLE stepwise_outbox (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at INTEGER NOT NULL,
    body       BLOB    NOT NULL
);

CREATE TABLE stepwise_outbox_cursor (
    destination TEXT    PRIMARY KEY,
    last_id     INTEGER NOT NULL
) WITHOUT ROWID;
