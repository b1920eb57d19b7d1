-- Two tenants: Acme (1) and Globex (2). Migrations run under sqlx's lock, so
-- replicas starting at once seed once; `ON CONFLICT` keeps a seed run by
-- hand harmless too.
INSERT INTO actors (name, tenant, manager) VALUES
    ('alice', 1, 0),
    ('bob',   1, 1),
    ('carol', 2, 1)
ON CONFLICT DO NOTHING;

INSERT INTO products (id, tenant, sku, name, price_cents, stock) VALUES
    (1, 1, 'ACME-ANVIL',  'Anvil',          4999, 12),
    (2, 1, 'ACME-ROCKET', 'Rocket skates', 12900,  3),
    (3, 1, 'ACME-MAGNET', 'Giant magnet',   2500, 40),
    (4, 2, 'GLX-LAMP',    'Desk lamp',      3900,  7)
ON CONFLICT DO NOTHING;

-- The ids above were given, not drawn: the next product drawn is 5.
SELECT setval(pg_get_serial_sequence('products', 'id'), (SELECT MAX(id) FROM products));
