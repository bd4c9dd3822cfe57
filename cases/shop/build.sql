-- The bundled example: a small online shop, built deterministically (no random()).
-- Logical date: 2025-06-30. Traps, small versions of the Vantage warehouse's:
--   * test accounts in customers (is_test) that analysts exclude;
--   * cancelled orders, which revenue excludes;
--   * orders_old: a frozen copy from the 2025-03-31 migration (deprecated, do not use);
--   * legacy.customers_v1: a pre-migration customer table with stale regions;
--   * discounts stored as a fraction on the order, NULL when none.
CREATE SCHEMA legacy;

CREATE TABLE customers (
    id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, region VARCHAR NOT NULL,
    signup_date DATE NOT NULL, is_test BOOLEAN NOT NULL);
COMMENT ON COLUMN customers.is_test IS 'internal test account; exclude from every business metric';
INSERT INTO customers
SELECT i, 'Customer ' || lpad(i::VARCHAR, 3, '0'),
       ['north', 'south', 'east', 'west'][1 + (i * 7) % 4],
       DATE '2024-01-01' + CAST((i * 11) % 500 AS INTEGER),
       i % 17 = 0
FROM range(1, 61) t(i);

CREATE TABLE products (
    id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, category VARCHAR NOT NULL, list_price DECIMAL(10, 2) NOT NULL);
INSERT INTO products
SELECT i, 'Product ' || i, ['toys', 'books', 'garden', 'kitchen'][1 + i % 4], 4 + (i * 37) % 95 + 0.99
FROM range(1, 25) t(i);

CREATE TABLE orders (
    id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, ordered_at TIMESTAMP NOT NULL,
    status VARCHAR NOT NULL, discount DOUBLE);
COMMENT ON COLUMN orders.status IS 'complete | cancelled; cancelled orders carry no revenue';
COMMENT ON COLUMN orders.discount IS 'fraction of the order total, NULL when no discount';
INSERT INTO orders
SELECT i, 1 + (i * 23) % 55,
       TIMESTAMP '2025-01-01 09:00:00' + INTERVAL (CAST((i * 97) % (180 * 24) AS INTEGER)) HOUR,
       CASE WHEN i % 9 = 0 THEN 'cancelled' ELSE 'complete' END,
       CASE WHEN i % 6 = 0 THEN 0.1 WHEN i % 10 = 0 THEN 0.25 ELSE NULL END
FROM range(1, 401) t(i);

CREATE TABLE order_lines (
    order_id INTEGER NOT NULL, line_no INTEGER NOT NULL, product_id INTEGER NOT NULL,
    quantity INTEGER NOT NULL, unit_price DECIMAL(10, 2) NOT NULL, PRIMARY KEY (order_id, line_no));
COMMENT ON COLUMN order_lines.unit_price IS 'price charged per unit, before the order discount';
INSERT INTO order_lines
SELECT o.id, l, p.id, 1 + (o.id + l * 3) % 5, p.list_price
FROM orders o, range(1, 4) r(l), products p
WHERE l <= 1 + o.id % 3 AND p.id = 1 + (o.id * 5 + l * 7) % 24;

CREATE TABLE returns (
    order_id INTEGER NOT NULL, line_no INTEGER NOT NULL, returned_at DATE NOT NULL, quantity INTEGER NOT NULL);
INSERT INTO returns
SELECT ol.order_id, ol.line_no, CAST(o.ordered_at AS DATE) + 14, 1
FROM order_lines ol JOIN orders o ON o.id = ol.order_id
WHERE (ol.order_id * 3 + ol.line_no) % 13 = 0 AND o.status = 'complete';

-- Deprecated: frozen at the 2025-03-31 migration; later orders are missing.
CREATE TABLE orders_old AS SELECT * FROM orders WHERE ordered_at < TIMESTAMP '2025-04-01';
CREATE TABLE legacy.customers_v1 AS
SELECT id, name, CASE WHEN region = 'east' THEN 'north' ELSE region END AS region FROM customers;
