-- Tenants, their people, their products, and what they order: the schema of
-- `migrations/sqlite` in PostgreSQL's types. Integers are BIGINT, as SQLite's
-- INTEGER is 64 bits, and the flags stay 0/1 integers, so that the shop's
-- queries are one text for both engines (see `src/database.rs`).
CREATE TABLE actors (
    name    TEXT PRIMARY KEY,
    tenant  BIGINT NOT NULL,
    manager BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE products (
    id          BIGSERIAL PRIMARY KEY,
    tenant      BIGINT NOT NULL,
    sku         TEXT NOT NULL,
    name        TEXT NOT NULL,
    price_cents BIGINT NOT NULL CHECK (price_cents > 0),
    stock       BIGINT NOT NULL CHECK (stock >= 0),
    UNIQUE (tenant, sku)
);

CREATE TABLE orders (
    id          BIGSERIAL PRIMARY KEY,
    tenant      BIGINT NOT NULL,
    product_id  BIGINT NOT NULL REFERENCES products (id),
    quantity    BIGINT NOT NULL CHECK (quantity > 0),
    total_cents BIGINT NOT NULL,
    placed_by   TEXT NOT NULL,
    cancelled   BIGINT NOT NULL DEFAULT 0
);
