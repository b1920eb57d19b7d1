-- Bearer tokens for `shop serve --http`. Only a token's SHA-256 is kept: the
-- token itself is printed once, by `shop token issue`, and never stored.
-- Times are Unix seconds.
CREATE TABLE tokens (
    id         BIGSERIAL PRIMARY KEY,
    hash       BYTEA NOT NULL UNIQUE CHECK (octet_length(hash) = 32),
    actor      TEXT NOT NULL REFERENCES actors (name),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT
);
