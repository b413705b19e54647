-- The order desk's seed data: every trial starts from a fresh database made from it.
CREATE TABLE orders (
    id TEXT PRIMARY KEY,
    customer TEXT NOT NULL,
    item TEXT NOT NULL,
    amount REAL NOT NULL,
    status TEXT NOT NULL  -- shipped, delivered or refunded
);
CREATE TABLE refunds (
    order_id TEXT NOT NULL REFERENCES orders (id),
    amount REAL NOT NULL,
    reason TEXT NOT NULL
);
INSERT INTO orders VALUES
    ('A-1001', 'Ada', 'desk lamp', 42.0, 'delivered'),
    ('A-1002', 'Ben', 'office chair', 189.0, 'shipped'),
    ('A-1003', 'Cy', 'monitor arm', 65.5, 'refunded');
INSERT INTO refunds VALUES ('A-1003', 65.5, 'arrived damaged');
-- The carrier's tracking, served by the shipping MCP server (shipping_server.py).
CREATE TABLE shipments (
    order_id TEXT PRIMARY KEY REFERENCES orders (id),
    carrier TEXT NOT NULL,
    status TEXT NOT NULL,
    eta TEXT
);
INSERT INTO shipments VALUES
    ('A-1001', 'DHL', 'delivered', NULL),
    ('A-1002', 'UPS', 'in transit, at the Leipzig hub', '2026-12-02');
