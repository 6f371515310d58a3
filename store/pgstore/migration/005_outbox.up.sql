-- Notices of status changes, written with the step that made them and
-- delivered after; each destination's cursor is the last one it took.
-- Writers take an advisory lock before inserting (see outbox.go), so that
-- ids are handed out in commit order.
CREATE TABLE stepwise_outbox (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at BIGINT NOT NULL,
    body       BYTEA  NOT NULL
);

CREATE TABLE stepwise_outbox_cursor (
    destination TEXT COLLATE "C" PRIMARY KEY,
    last_id     BIGINT NOT NULL
);
