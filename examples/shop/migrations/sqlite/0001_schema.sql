-- Tenants, their people, their products, and what they order.
CREATE TABLE actors (
    name    TEXT PRIMARY KEY,
    tenant  INTEGER NOT NULL,
    manager INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE products (
    id          INTEGER PRIMARY KEY,
    tenant      INTEGER NOT NULL,
    sku         TEXT NOT NULL,
    name        TEXT NOT NULL,
    price_cents INTEGER NOT NULL CHECK (price_cents > 0),
    stock       INTEGER NOT NULL CHECK (stock >= 0),
    UNIQUE (tenant, sku)
);

CREATE TABLE orders (
    id          INTEGER PRIMARY KEY,
    tenant      INTEGER NOT NULL,
    product_id  INTEGER NOT NULL REFERENCES products (id),
    quantity    INTEGER NOT NULL CHECK (quantity > 0),
    total_cents INTEGER NOT NULL,
    placed_by   TEXT NOT NULL,
    cancelled   INTEGER NOT NULL DEFAULT 0
);

-- Approvals of write calls, bound to the digest of the exact call.
CREATE TABLE approvals (
    digest       TEXT PRIMARY KEY,
    tool_key     TEXT NOT NULL,
    arguments    TEXT NOT NULL,
    requested_by TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'consumed')),
    approved_by  TEXT
);
