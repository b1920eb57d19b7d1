-- Bearer tokens for `shop serve --http`. Only a token's SHA-256 is kept: the
-- token itself is printed once, by `shop token issue`, and never stored.
-- Times are Unix seconds.
CREATE TABLE tokens (
    id         INTEGER PRIMARY KEY,
    hash       BLOB NOT NULL UNIQUE CHECK (length(hash) = 32),
    actor      TEXT NOT NULL REFERENCES actors (name),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER
);
