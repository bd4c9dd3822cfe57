"""The data of the Vantage Retail Group warehouse, generated in DuckDB SQL.

Every pseudo-random number comes from ``u(i, salt)``: an integer hash (xor-shift and
multiply, masked to 32 bits) of the row number and a salt, divided by 2**32. Only
integer arithmetic, exact binary fractions and +-*/ on doubles are used (no DuckDB
``hash()``/``random()``, no transcendental functions), so the data and the content hash
are the same on every platform, Python version and thread count.

No stored value is decided by the engine's rounding. Every rounding is ``xround(x, n)``,
written out here: scale by an integer power of ten (exact for decimals, one IEEE
multiplication for doubles), round half away from zero with ``floor`` and an exact
comparison, scale back. DuckDB's own ``round(double, n)`` changed between 2.0.0 and
2.0.1 (2.0.1 rounds the double's exact binary value, so 299.565 became 299.56) and is
never called. What ``xround`` returns lies on the decimal grid (within an ulp of
k / 10**n), so the cast into a DECIMAL column that follows has nothing left to decide.

Each step is ``(label, sql)``; ``$NAME`` tokens are replaced by the sizes of the scale.
"""
from __future__ import annotations

from typing import Any

MACROS = [
    "CREATE OR REPLACE TEMP MACRO _mx(x) AS (xor(x, x >> 16) * 73244475) & 4294967295",
    "CREATE OR REPLACE TEMP MACRO h32(x) AS xor(_mx(_mx(x & 4294967295)), _mx(_mx(x & 4294967295)) >> 16)",
    "CREATE OR REPLACE TEMP MACRO u(i, s) AS h32(CAST(i AS BIGINT) * 2654435 + CAST(s AS BIGINT) * 40503 + $SEED) / 4294967296.0",
    "CREATE OR REPLACE TEMP MACRO ri(r, n) AS CAST(floor((r) * (n)) AS BIGINT)",
    "CREATE OR REPLACE TEMP MACRO pick(lst, r) AS (lst)[1 + CAST(floor((r) * len(lst)) AS BIGINT)]",
    "CREATE OR REPLACE TEMP MACRO ts(d, secs) AS CAST(d AS TIMESTAMP) + to_seconds(CAST(secs AS BIGINT))",
    # rounding half away from zero, by the generator's rule rather than the engine's (see above)
    "CREATE OR REPLACE TEMP MACRO _half_away(r) AS "
    "sign(r) * (floor(abs(r)) + CASE WHEN abs(r) - floor(abs(r)) >= 0.5 THEN 1 ELSE 0 END)",
    "CREATE OR REPLACE TEMP MACRO _pow10(n) AS "
    "CASE n WHEN 0 THEN 1 WHEN 1 THEN 10 WHEN 2 THEN 100 WHEN 3 THEN 1000 WHEN 4 THEN 10000 WHEN 6 THEN 1000000 END",
    "CREATE OR REPLACE TEMP MACRO xround(x, n) AS CASE WHEN n >= 0 THEN _half_away(x * _pow10(n)) / _pow10(n) "
    "ELSE _half_away(x / _pow10(-n)) * _pow10(-n) END",
]

FIRST_NAMES = ["James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda", "David", "Elizabeth",
               "William", "Barbara", "Richard", "Susan", "Joseph", "Jessica", "Thomas", "Sarah", "Charles", "Karen",
               "Oliver", "Amelia", "Liam", "Emma", "Noah", "Olivia", "Lucas", "Sophie", "Leon", "Hannah",
               "Louis", "Chloe", "Ethan", "Mia", "Lukas", "Lea", "Hugo", "Camille", "Felix", "Clara"]
LAST_NAMES = ["Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
              "Wilson", "Anderson", "Taylor", "Thomas", "Moore", "Jackson", "Martin", "Lee", "Thompson", "White",
              "Tremblay", "Roy", "Gagnon", "Evans", "Walker", "Wright", "Muller", "Schmidt", "Schneider", "Fischer",
              "Weber", "Meyer", "Bernard", "Dubois", "Durand", "Lefebvre", "Moreau", "Laurent", "Simon", "Michel"]


def _lst(values: list[Any]) -> str:
    return "[" + ", ".join("'" + str(v).replace("'", "''") + "'" for v in values) + "]"


FN = _lst(FIRST_NAMES)
LN = _lst(LAST_NAMES)

STEPS: list[tuple[str, str]] = []


def step(label: str, sql: str) -> None:
    STEPS.append((label, sql.replace("$FN", FN).replace("$LN", LN)))


# ---------------------------------------------------------------- reference data
step("countries", """
CREATE TEMP TABLE _country AS SELECT * FROM (VALUES
 (1, 'US', 'USD', 1, 30, 101, 0.0700, 1.00, 50.00, 4.99),
 (2, 'CA', 'CAD', 31, 6, 102, 0.1300, 1.35, 70.00, 6.99),
 (3, 'GB', 'GBP', 37, 6, 103, 0.2000, 0.79, 40.00, 3.99),
 (4, 'DE', 'EUR', 43, 4, 104, 0.1900, 0.92, 45.00, 4.49),
 (5, 'FR', 'EUR', 47, 2, 105, 0.2000, 0.92, 45.00, 4.49)
) t(ci, country_code, currency_code, first_store, n_stores, online_store, tax_rate, price_factor, free_ship_over, ship_fee)
""")

step("finance.currencies", """
INSERT INTO finance.currencies VALUES
 ('USD', 'US Dollar', 2, TRUE), ('CAD', 'Canadian Dollar', 2, FALSE),
 ('GBP', 'Pound Sterling', 2, FALSE), ('EUR', 'Euro', 2, FALSE)
""")

step("sales.regions", """
INSERT INTO sales.regions VALUES
 (1, 'US Northeast', 'US', 1003), (2, 'US South', 'US', 1004), (3, 'US Midwest', 'US', 1005),
 (4, 'US West', 'US', 1006), (5, 'Canada', 'CA', 1007), (6, 'UK & Ireland', 'GB', 1008),
 (7, 'DACH', 'DE', 1009), (8, 'France', 'FR', 1010), (9, 'US Digital', 'US', 1011)
""")

step("sales.channels", """
INSERT INTO sales.channels VALUES
 (1, 'store', FALSE), (2, 'web', TRUE), (3, 'app', TRUE), (4, 'marketplace', TRUE), (5, 'phone', TRUE)
""")

step("sales.stores", """
INSERT INTO sales.stores BY NAME
WITH phys AS (
  SELECT s AS store_id,
    ['New York Herald Sq', 'Brooklyn', 'Boston', 'Philadelphia', 'Newark', 'Hartford', 'Pittsburgh', 'Albany',
     'Atlanta', 'Miami', 'Orlando', 'Charlotte', 'Dallas', 'Houston', 'Austin', 'San Antonio',
     'Chicago', 'Minneapolis', 'Detroit', 'St. Louis', 'Milwaukee', 'Kansas City',
     'Denver', 'Phoenix', 'Salt Lake City', 'Albuquerque', 'Los Angeles', 'San Francisco', 'Seattle', 'San Diego',
     'Toronto Eaton', 'Ottawa', 'Montreal', 'Vancouver', 'Calgary', 'Victoria',
     'London Oxford St', 'Manchester', 'Birmingham', 'Leeds', 'Glasgow', 'Dublin',
     'Berlin', 'Munich', 'Hamburg', 'Vienna', 'Paris Rivoli', 'Lyon'][s] AS city,
    CASE WHEN s <= 30 THEN 'US' WHEN s <= 36 THEN 'CA' WHEN s <= 41 THEN 'GB' WHEN s = 42 THEN 'GB'
         WHEN s <= 46 THEN 'DE' ELSE 'FR' END AS country_code,
    CASE WHEN s <= 8 THEN 1 WHEN s <= 16 THEN 2 WHEN s <= 22 THEN 3 WHEN s <= 30 THEN 4 WHEN s <= 36 THEN 5
         WHEN s <= 42 THEN 6 WHEN s <= 46 THEN 7 ELSE 8 END AS region_id,
    CASE WHEN s <= 12 THEN 'America/New_York' WHEN s <= 22 THEN 'America/Chicago' WHEN s <= 26 THEN 'America/Denver'
         WHEN s <= 30 THEN 'America/Los_Angeles' WHEN s <= 33 THEN 'America/Toronto' WHEN s <= 34 THEN 'America/Vancouver'
         WHEN s <= 35 THEN 'America/Edmonton' WHEN s <= 36 THEN 'America/Vancouver' WHEN s <= 41 THEN 'Europe/London'
         WHEN s <= 42 THEN 'Europe/Dublin' WHEN s <= 45 THEN 'Europe/Berlin' WHEN s <= 46 THEN 'Europe/Vienna'
         ELSE 'Europe/Paris' END AS timezone
  FROM range(1, 49) t(s)
)
SELECT store_id, 'Vantage ' || city AS store_name, 'physical' AS store_type, region_id, p.country_code, city,
       c.currency_code, timezone,
       CASE timezone WHEN 'America/New_York' THEN -300 WHEN 'America/Toronto' THEN -300 WHEN 'America/Chicago' THEN -360
            WHEN 'America/Denver' THEN -420 WHEN 'America/Edmonton' THEN -420 WHEN 'America/Los_Angeles' THEN -480
            WHEN 'America/Vancouver' THEN -480 WHEN 'Europe/London' THEN 0 WHEN 'Europe/Dublin' THEN 0 ELSE 60 END
         AS utc_offset_minutes,
       DATE '2008-03-01' + CAST(ri(u(store_id, 11), 4000) AS INTEGER) AS opened_date,
       NULL::DATE AS closed_date, CAST(800 + ri(u(store_id, 12), 40) * 50 AS INTEGER) AS square_meters
FROM phys p JOIN _country c USING (country_code)
UNION ALL
SELECT online_store, 'vantage online ' || lower(country_code), 'online',
       CASE country_code WHEN 'US' THEN 9 WHEN 'CA' THEN 5 WHEN 'GB' THEN 6 WHEN 'DE' THEN 7 ELSE 8 END,
       country_code, CASE country_code WHEN 'US' THEN 'New York' WHEN 'CA' THEN 'Toronto' WHEN 'GB' THEN 'London'
       WHEN 'DE' THEN 'Berlin' ELSE 'Paris' END, currency_code,
       CASE country_code WHEN 'US' THEN 'America/New_York' WHEN 'CA' THEN 'America/Toronto' WHEN 'GB' THEN 'Europe/London'
       WHEN 'DE' THEN 'Europe/Berlin' ELSE 'Europe/Paris' END,
       CASE country_code WHEN 'US' THEN -300 WHEN 'CA' THEN -300 WHEN 'GB' THEN 0 ELSE 60 END,
       DATE '2016-09-01' + CAST(ci * 120 AS INTEGER), NULL, NULL
FROM _country
""")

step("_store", "CREATE TEMP TABLE _store AS SELECT * FROM sales.stores")

step("ops.dim_date", """
INSERT INTO ops.dim_date BY NAME
SELECT d AS date_day, year(d) AS year, quarter(d) AS quarter, month(d) AS month, isodow(d) AS day_of_week,
       isodow(d) >= 6 AS is_weekend,
       CASE WHEN month(d) >= 2 THEN year(d) ELSE year(d) - 1 END AS fiscal_year,
       ((month(d) + 10) % 12) // 3 + 1 AS fiscal_quarter,
       ((month(d) + 10) % 12) + 1 AS fiscal_period,
       (month(d) = 1 AND day(d) = 1) OR (month(d) = 7 AND day(d) = 4) OR (month(d) = 12 AND day(d) = 25)
         OR d IN (DATE '2019-11-28', DATE '2019-11-29', DATE '2020-11-26', DATE '2020-11-27', DATE '2021-11-25',
                  DATE '2021-11-26', DATE '2022-11-24', DATE '2022-11-25', DATE '2023-11-23', DATE '2023-11-24',
                  DATE '2024-11-28', DATE '2024-11-29', DATE '2025-11-27', DATE '2025-11-28', DATE '2026-11-26',
                  DATE '2026-11-27') AS is_holiday_us
FROM (SELECT CAST(DATE '2019-01-01' + CAST(i AS INTEGER) AS DATE) AS d FROM range(0, 2922) t(i))
""")

step("finance.fiscal_periods", """
INSERT INTO finance.fiscal_periods BY NAME
SELECT fiscal_year * 100 + fiscal_period AS fiscal_period_id, fiscal_year, fiscal_period, fiscal_quarter,
       min(date_day) AS start_date, max(date_day) AS end_date, max(date_day) < DATE '2025-11-01' AS is_closed
FROM ops.dim_date WHERE fiscal_year BETWEEN 2019 AND 2025
GROUP BY ALL
""")

# ---------------------------------------------------------------- fx
step("_fx_pub", """
CREATE TEMP TABLE _fx_pub AS
WITH days AS (SELECT CAST(DATE '2019-01-01' + CAST(k AS INTEGER) AS DATE) AS d, k FROM range(0, 2922) t(k)),
cur AS (SELECT * FROM (VALUES (1, 'CAD', 0.7400, 700), (2, 'GBP', 1.2700, 540), (3, 'EUR', 1.0900, 610)) v(cx, currency_code, base, period))
SELECT d AS rate_date, currency_code, k, cx,
       CAST(xround(base * (0.96 + 0.08 * (1 - abs(2 * ((k % period) / period) - 1)) + 0.01 * (u(k, 500 + cx) - 0.5)), 6)
            AS DECIMAL(12,6)) AS rate
FROM days, cur WHERE isodow(d) <= 5
""")

step("finance.fx_rates", """
INSERT INTO finance.fx_rates BY NAME
SELECT rate_date, currency_code, rate AS usd_per_unit,
       CASE WHEN rate_date < DATE '2025-01-01' THEN 'ECB reference' ELSE 'Refinitiv WM/R' END AS source
FROM _fx_pub WHERE rate_date <= DATE '2025-11-28'
""")

step("finance.fx_rates_bak", """
INSERT INTO finance.fx_rates_bak BY NAME
SELECT rate_date, currency_code,
       CASE WHEN rate_date < DATE '2025-01-01' THEN rate
            ELSE CAST(xround(rate * (1 + 0.004 * (u(k, 520 + cx) - 0.5)), 6) AS DECIMAL(12,6)) END AS usd_per_unit,
       'ECB reference' AS source
FROM _fx_pub WHERE rate_date <= DATE '2025-11-28'
""")

# effective rate for every day (latest publication on or before it); USD = 1
step("_fx_day", """
CREATE TEMP TABLE _fx_day AS
SELECT d.date_day AS day, p.currency_code, p.rate
FROM ops.dim_date d CROSS JOIN (VALUES ('CAD'), ('GBP'), ('EUR')) c(currency_code)
ASOF JOIN _fx_pub p ON p.currency_code = c.currency_code AND d.date_day >= p.rate_date
WHERE d.date_day >= DATE '2019-01-07'
UNION ALL SELECT date_day, 'USD', CAST(1 AS DECIMAL(12,6)) FROM ops.dim_date
""")

step("legacy.fx_rates_manual", """
INSERT INTO legacy.fx_rates_manual
SELECT day, currency_code, CAST(xround(rate, 4) AS DECIMAL(12,6)) FROM _fx_day
WHERE currency_code <> 'USD' AND day = last_day(day) AND day BETWEEN DATE '2019-01-31' AND DATE '2024-06-30'
""")

step("finance.tax_rates", """
INSERT INTO finance.tax_rates VALUES
 ('US', 0.0700, DATE '2015-01-01', NULL), ('CA', 0.1300, DATE '2016-07-01', NULL),
 ('GB', 0.2000, DATE '2011-01-04', NULL), ('DE', 0.1600, DATE '2020-07-01', DATE '2020-12-31'),
 ('DE', 0.1900, DATE '2007-01-01', DATE '2020-06-30'), ('DE', 0.1900, DATE '2021-01-01', NULL),
 ('FR', 0.2000, DATE '2014-01-01', NULL)
""")

# ---------------------------------------------------------------- products
step("sales.product_categories", """
INSERT INTO sales.product_categories BY NAME
SELECT i AS category_id, c.category_name, c.department_name, c.return_window_days FROM (VALUES
 (1, 'Men''s Tops', 'Apparel', 30), (2, 'Women''s Tops', 'Apparel', 30), (3, 'Outerwear', 'Apparel', 30),
 (4, 'Footwear', 'Apparel', 30), (5, 'Accessories', 'Apparel', 30), (6, 'Kitchen', 'Home', 30),
 (7, 'Bedding', 'Home', 30), (8, 'Decor', 'Home', 30), (9, 'Furniture', 'Home', 14), (10, 'Audio', 'Electronics', 14),
 (11, 'Computers', 'Electronics', 14), (12, 'Phones & Tablets', 'Electronics', 14), (13, 'Smart Home', 'Electronics', 14),
 (14, 'TV & Video', 'Electronics', 14), (15, 'Skincare', 'Beauty', 14), (16, 'Makeup', 'Beauty', 14),
 (17, 'Fragrance', 'Beauty', 14), (18, 'Fitness', 'Sports', 30), (19, 'Outdoor', 'Sports', 30),
 (20, 'Cycling', 'Sports', 30), (21, 'Toys', 'Toys & Games', 30), (22, 'Board Games', 'Toys & Games', 30),
 (23, 'Snacks', 'Grocery', 0), (24, 'Beverages', 'Grocery', 0), (25, 'Books', 'Books & Media', 30),
 (26, 'Music', 'Books & Media', 30), (27, 'Pet Supplies', 'Home', 30), (28, 'Garden', 'Home', 30),
 (29, 'Swimwear', 'Apparel', 30), (30, 'Kids Clothing', 'Apparel', 30)
) c(i, category_name, department_name, return_window_days)
""")

step("_prod", """
CREATE TEMP TABLE _prod AS
WITH b AS (
  SELECT p AS product_id, 1 + ri(u(p, 304), 30) AS category_id,
    CASE WHEN p <= 900 THEN DATE '2019-01-01' + CAST((p * 13) % 1000 AS INTEGER)
         ELSE DATE '2022-01-01' + CAST(floor((p - 900) * 1400.0 / 300) AS INTEGER) END AS launched_date,
    u(p, 301) AS r1, u(p, 303) AS r3, u(p, 305) AS r5, u(p, 306) AS r6
  FROM range(1, 1201) t(p)
), c AS (
  SELECT b.*, [18, 22, 60, 65, 12, 15, 35, 20, 210, 45, 380, 290, 55, 320, 14, 11, 38, 30, 45, 260, 16, 20, 4, 3, 12, 9, 13, 18, 25, 14][category_id] AS base
  FROM b
)
SELECT product_id, category_id, launched_date,
  CASE WHEN product_id % 23 = 0 AND product_id <= 900 THEN DATE '2024-03-31' END AS discontinued_date,
  CAST(xround(base * (0.5 + 1.5 * r1), 0) - 0.01 AS DECIMAL(10,2)) AS p1,
  CAST(xround((xround(base * (0.5 + 1.5 * r1), 0) - 0.01) * (1 + floor(r3 * 9) / 100), 2) AS DECIMAL(10,2)) AS p2,
  CAST(xround(xround((xround(base * (0.5 + 1.5 * r1), 0) - 0.01) * (1 + floor(r3 * 9) / 100), 2) * (1 + floor(r5 * 7) / 100), 2)
       AS DECIMAL(10,2)) AS p3,
  0.35 + 0.2 * r6 AS cost_ratio
FROM c
""")

step("sales.products", """
INSERT INTO sales.products BY NAME
SELECT product_id, 'VRG-' || lpad(CAST(product_id AS VARCHAR), 5, '0') AS sku,
  pick(['Classic', 'Urban', 'Essential', 'Premium', 'Eco', 'Pro', 'Everyday', 'Signature', 'Nordic', 'Coastal'], u(product_id, 310))
    || ' ' || c.category_name || ' ' || CAST(1 + product_id % 97 AS VARCHAR) AS product_name,
  category_id,
  pick(['Vantage Basics', 'Northwind', 'Altura', 'Kestrel', 'Maple & Co', 'Luma', 'Forge', 'Halcyon', 'Brightside', 'Tessera'],
       u(product_id, 311)) AS brand,
  p3 AS list_price_usd, launched_date, discontinued_date, discontinued_date IS NULL AS is_active
FROM _prod JOIN sales.product_categories c USING (category_id)
""")

step("sales.product_price_history", """
INSERT INTO sales.product_price_history BY NAME
WITH v AS (
  SELECT product_id, 1 AS k, p1 AS price, DATE '2019-01-01' AS vf, DATE '2023-04-01' AS vt, launched_date FROM _prod
  UNION ALL SELECT product_id, 2, p2, DATE '2023-04-01', DATE '2025-02-01', launched_date FROM _prod
  UNION ALL SELECT product_id, 3, p3, DATE '2025-02-01', DATE '9999-12-31', launched_date FROM _prod
)
SELECT product_id * 10 + k AS price_version_id, product_id, price AS list_price_usd,
       greatest(vf, launched_date) AS valid_from, vt AS valid_to, k = 3 AS is_current
FROM v WHERE vt > launched_date
""")

step("ops.product_costs", """
INSERT INTO ops.product_costs BY NAME
SELECT price_version_id AS product_cost_id, h.product_id,
       CAST(xround(h.list_price_usd * p.cost_ratio, 2) AS DECIMAL(10,2)) AS unit_cost_usd, valid_from, valid_to
FROM sales.product_price_history h JOIN _prod p USING (product_id)
""")

step("legacy.products", """
INSERT INTO legacy.products
SELECT product_id, upper(product_name), upper(c.department_name), _p.p2
FROM sales.products p JOIN sales.product_categories c USING (category_id) JOIN _prod _p USING (product_id)
WHERE p.launched_date <= DATE '2024-06-30'
""")

# ---------------------------------------------------------------- customers
step("_cust", """
CREATE TEMP TABLE _cust AS
WITH b AS (
  SELECT c AS customer_id,
    CASE WHEN c <= $N_CUST30 THEN ts(DATE '2019-01-01' + CAST(floor((c - 1) * 1095.0 / $N_CUST30) AS INTEGER), ri(u(c, 208), 86400))
         ELSE ts(DATE '2022-01-01' + CAST(floor((c - 1 - $N_CUST30) * 1430.0 / ($N_CUST - $N_CUST30)) AS INTEGER), ri(u(c, 208), 86400))
    END AS signup_at,
    u(c, 201) AS rc, u(c, 203) AS rs, u(c, 204) AS rseg, u(c, 205) AS rt, u(c, 206) AS rtest, u(c, 207) AS rdel,
    u(c, 209) AS rdel2
  FROM range(1, $N_CUST + 1) t(c)
)
SELECT b.*, co.ci, co.country_code, co.currency_code,
  co.first_store + ri(rs, co.n_stores) AS home_store_id,
  CASE WHEN rseg < 0.72 THEN 'Consumer' WHEN rseg < 0.90 THEN 'Premium' ELSE 'Business' END AS segment,
  CASE WHEN rt < 0.5 THEN 'none' WHEN rt < 0.8 THEN 'silver' WHEN rt < 0.95 THEN 'gold' ELSE 'platinum' END AS loyalty_tier,
  rtest < 0.012 AS is_test,
  CASE WHEN rdel < 0.006 AND signup_at < TIMESTAMP '2025-09-01' THEN signup_at + to_days(CAST(30 + floor(rdel2 * (DATE '2025-11-30' - CAST(signup_at AS DATE) - 30)) AS INTEGER)) END AS deleted_at
FROM b JOIN _country co ON co.ci = CASE WHEN rc < 0.62 THEN 1 WHEN rc < 0.74 THEN 2 WHEN rc < 0.86 THEN 3 WHEN rc < 0.94 THEN 4 ELSE 5 END
""")

step("sales.customers", """
INSERT INTO sales.customers BY NAME
SELECT customer_id, 'C' || lpad(CAST(customer_id AS VARCHAR), 8, '0') AS customer_code,
  CASE WHEN deleted_at IS NULL THEN pick($FN, u(customer_id, 220)) END AS first_name,
  CASE WHEN deleted_at IS NULL THEN pick($LN, u(customer_id, 221)) END AS last_name,
  CASE WHEN deleted_at IS NOT NULL THEN NULL
       WHEN is_test THEN 'qa+' || customer_id || '@vantage-test.io'
       ELSE lower(pick($FN, u(customer_id, 220)) || '.' || pick($LN, u(customer_id, 221))) || customer_id || '@'
            || pick(['gmail.com', 'yahoo.com', 'outlook.com', 'icloud.com', 'proton.me', 'gmx.de', 'orange.fr'], u(customer_id, 222)) END AS email,
  country_code, home_store_id, segment, loyalty_tier, signup_at,
  CAST(1950 + ri(u(customer_id, 223), 56) AS INTEGER) AS birth_year,
  u(customer_id, 224) < 0.55 AS marketing_opt_in, is_test, deleted_at
FROM _cust
""")

step("_cust_cum", """
CREATE TEMP TABLE _cust_cum AS
WITH s AS (SELECT CAST(signup_at AS DATE) AS sd, max(customer_id) AS n FROM _cust GROUP BY ALL)
SELECT d.date_day AS day, s.n FROM ops.dim_date d ASOF JOIN s ON d.date_day >= s.sd
WHERE d.date_day BETWEEN DATE '2022-01-01' AND DATE '2025-11-30'
""")

step("_test_cust", """
CREATE TEMP TABLE _test_cust AS
SELECT row_number() OVER (ORDER BY customer_id) AS k, customer_id FROM _cust
WHERE is_test AND signup_at < TIMESTAMP '2022-01-01'
""")

step("sales.dim_customer", """
INSERT INTO sales.dim_customer BY NAME
WITH v AS (
  SELECT customer_id, country_code, CAST(signup_at AS DATE) AS d0, segment AS seg_now, loyalty_tier AS tier_now,
    u(customer_id, 230) AS rv, u(customer_id, 231) AS r2, u(customer_id, 232) AS r3,
    u(customer_id, 233) AS rs1, u(customer_id, 234) AS rs2, u(customer_id, 235) AS rt1
  FROM _cust
), n AS (
  SELECT *, CASE WHEN d0 >= DATE '2025-06-01' THEN 1 WHEN rv < 0.10 THEN 3 WHEN rv < 0.38 THEN 2 ELSE 1 END AS nv,
    d0 + 1 + CAST(floor(r2 * (DATE '2025-11-30' - d0 - 60)) AS INTEGER) AS d1
  FROM v
), m AS (
  SELECT *, d1 + 1 + CAST(floor(r3 * (DATE '2025-11-30' - d1 - 2)) AS INTEGER) AS d2 FROM n
), rows AS (
  SELECT customer_id, country_code, 1 AS k, nv, d0 AS vf, CASE nv WHEN 1 THEN DATE '9999-12-31' ELSE d1 END AS vt,
         CASE WHEN nv = 1 THEN seg_now WHEN rs1 < 0.8 THEN 'Consumer' WHEN rs1 < 0.95 THEN 'Premium' ELSE 'Business' END AS segment,
         CASE WHEN nv = 1 THEN tier_now WHEN rt1 < 0.6 THEN 'none' ELSE 'silver' END AS loyalty_tier FROM m
  UNION ALL
  SELECT customer_id, country_code, 2, nv, d1, CASE nv WHEN 2 THEN DATE '9999-12-31' ELSE d2 END,
         CASE WHEN nv = 2 THEN seg_now WHEN rs2 < 0.6 THEN 'Consumer' WHEN rs2 < 0.9 THEN 'Premium' ELSE 'Business' END,
         CASE WHEN nv = 2 THEN tier_now WHEN rt1 < 0.4 THEN 'silver' ELSE 'gold' END FROM m WHERE nv >= 2
  UNION ALL
  SELECT customer_id, country_code, 3, nv, d2, DATE '9999-12-31', seg_now, tier_now FROM m WHERE nv = 3
)
SELECT customer_id * 10 + k AS customer_sk, customer_id, segment, loyalty_tier, country_code,
       vf AS valid_from, vt AS valid_to, k = nv AS is_current
FROM rows
""")

step("sales.customer_addresses", """
INSERT INTO sales.customer_addresses BY NAME
WITH a AS (
  SELECT customer_id, country_code, 'shipping' AS address_type, 1 AS k FROM _cust
  UNION ALL SELECT customer_id, country_code, 'billing', 2 FROM _cust WHERE u(customer_id, 240) < 0.3
  UNION ALL SELECT customer_id, country_code, 'shipping', 3 FROM _cust WHERE u(customer_id, 241) < 0.12
)
SELECT customer_id * 4 + k AS address_id, a.customer_id, address_type, s.city,
       lpad(CAST(ri(u(customer_id * 4 + k, 242), 99999) AS VARCHAR), 5, '0') AS postal_code, a.country_code,
       k <> 3 AS is_default
FROM a JOIN _cust c USING (customer_id) JOIN _store s ON s.store_id = c.home_store_id
""")

step("legacy.customers", """
INSERT INTO legacy.customers
SELECT c.customer_id, CASE WHEN c.deleted_at IS NULL OR c.deleted_at > TIMESTAMP '2024-06-30 23:59:59'
                           THEN pick($FN, u(c.customer_id, 220)) || ' ' || pick($LN, u(c.customer_id, 221)) END,
       sc.email, c.country_code, left(d.segment, 1), CAST(c.signup_at AS DATE)
FROM _cust c JOIN sales.customers sc USING (customer_id)
JOIN sales.dim_customer d ON d.customer_id = c.customer_id AND DATE '2024-06-30' >= d.valid_from AND DATE '2024-06-30' < d.valid_to
WHERE c.signup_at <= TIMESTAMP '2024-06-30 23:59:59'
""")

step("sales.loyalty_accounts", """
INSERT INTO sales.loyalty_accounts BY NAME
SELECT customer_id AS loyalty_account_id, customer_id,
       CAST(signup_at AS DATE) + CAST(ri(u(customer_id, 250), 200) AS INTEGER) AS enrolled_date,
       CAST(ri(u(customer_id, 251), 20000) AS INTEGER) AS points_balance, loyalty_tier AS tier
FROM _cust WHERE loyalty_tier <> 'none' AND deleted_at IS NULL
  AND CAST(signup_at AS DATE) + CAST(ri(u(customer_id, 250), 200) AS INTEGER) <= DATE '2025-11-30'
""")

step("sales.customer_segments", """
INSERT INTO sales.customer_segments VALUES
 ('Consumer', 'Individual shoppers', NULL),
 ('Premium', 'Individuals with annual spend above the threshold or a paid membership', 1500.00),
 ('Business', 'Companies buying on account (net-30 invoices)', NULL)
""")

# ---------------------------------------------------------------- marketing reference (coupons needed by orders)
step("sales.promotions", """
INSERT INTO sales.promotions BY NAME
SELECT k + 1 AS promotion_id,
  pick(['Spring Refresh', 'Summer Sale', 'Back to School', 'Autumn Deals', 'Winter Warmers', 'Flash Week', 'Members Days',
        'Clearance', 'Weekend Special', 'Mid-Season Sale'], u(k, 260)) || ' ' || CAST(year(DATE '2022-01-01' + CAST(k * 21 AS INTEGER)) AS VARCHAR) AS promotion_name,
  CAST(pick([10, 15, 20, 25, 30], u(k, 261)) AS DECIMAL(5,2)) AS discount_pct,
  DATE '2022-01-01' + CAST(k * 21 AS INTEGER) AS start_date, DATE '2022-01-01' + CAST(k * 21 + 20 AS INTEGER) AS end_date,
  CASE WHEN u(k, 262) < 0.4 THEN 1 + ri(u(k, 263), 30) END AS category_id
FROM range(0, 69) t(k)
""")

step("marketing.channels", """
INSERT INTO marketing.channels VALUES
 (1, 'Paid Search', TRUE), (2, 'Paid Social', TRUE), (3, 'Email', FALSE), (4, 'Affiliate', TRUE),
 (5, 'Display', TRUE), (6, 'TV', TRUE), (7, 'Influencer', TRUE), (8, 'SMS', FALSE)
""")

step("marketing.campaigns", """
INSERT INTO marketing.campaigns BY NAME
WITH b AS (
  SELECT c AS campaign_id, 1 + ri(u(c, 270), 8) AS ch, u(c, 271) AS rc,
    DATE '2022-01-03' + CAST(floor((c - 1) * 1425.0 / 160) AS INTEGER) + CAST(ri(u(c, 272), 10) AS INTEGER) AS start_date,
    CAST(14 + ri(u(c, 273), 47) AS INTEGER) AS dur, u(c, 274) AS rcancel, u(c, 275) AS rb, u(c, 276) AS ro
  FROM range(1, 161) t(c)
)
SELECT campaign_id,
  CASE ch WHEN 1 THEN 'SEA' WHEN 2 THEN 'Social' WHEN 3 THEN 'CRM' WHEN 4 THEN 'AFF' WHEN 5 THEN 'DSP' WHEN 6 THEN 'TV'
          WHEN 7 THEN 'INF' ELSE 'SMS' END || '_' || country_code || '_' || strftime(start_date, '%Y%m') || '_'
    || pick(['Always On', 'Brand', 'Holiday', 'Reactivation', 'Launch', 'Clearance', 'Loyalty', 'Prospecting'], u(campaign_id, 277)) AS campaign_name,
  ch AS marketing_channel_id, country_code, start_date, start_date + dur - 1 AS end_date,
  CAST(xround(5000 + rb * 95000, -2) AS DECIMAL(14,2)) AS budget_usd,
  CASE WHEN start_date > DATE '2025-11-30' THEN 'planned' WHEN rcancel < 0.05 THEN 'cancelled'
       WHEN start_date + dur - 1 < DATE '2025-11-30' THEN 'completed' ELSE 'active' END AS status,
  CASE WHEN ro < 0.3 THEN 'awareness' WHEN ro < 0.75 THEN 'acquisition' ELSE 'retention' END AS objective
FROM b JOIN _country co ON co.ci = CASE WHEN rc < 0.6 THEN 1 WHEN rc < 0.72 THEN 2 WHEN rc < 0.86 THEN 3 WHEN rc < 0.95 THEN 4 ELSE 5 END
""")

step("marketing.coupons", """
INSERT INTO marketing.coupons BY NAME
SELECT 'SAVE10-' || strftime(m, '%Y%m') AS coupon_code, NULL::INTEGER AS campaign_id, 10.00 AS discount_pct,
       CAST(m AS DATE) AS valid_from, CAST(last_day(m) AS DATE) AS valid_to
FROM (SELECT CAST(DATE '2022-01-01' + to_months(CAST(i AS INTEGER)) AS DATE) AS m FROM range(0, 47) t(i))
UNION ALL SELECT 'BF' || y, NULL, 20.00, bf, bf + 3 FROM (VALUES ('22', DATE '2022-11-25'), ('23', DATE '2023-11-24'),
  ('24', DATE '2024-11-29'), ('25', DATE '2025-11-28')) v(y, bf)
UNION ALL SELECT 'WELCOME15', NULL, 15.00, DATE '2019-01-01', DATE '2026-12-31'
""")

# ---------------------------------------------------------------- orders
step("_ord0", """
CREATE TEMP TABLE _ord0 AS
WITH b AS (
  SELECT i, u(i, 101) AS r1, u(i, 102) AS r2, u(i, 103) AS r3, u(i, 104) AS r4, u(i, 105) AS r5, u(i, 106) AS r6,
         u(i, 107) AS r7, u(i, 108) AS r8, u(i, 109) AS r9, u(i, 110) AS r10, u(i, 111) AS r11, u(i, 112) AS r12,
         u(i, 113) AS r13, u(i, 114) AS r14, u(i, 115) AS r15, u(i, 116) AS r16, u(i, 117) AS r17, u(i, 118) AS r18,
         u(i, 119) AS r19
  FROM range(1, $N_ORD + 1) t(i)
), d AS (
  SELECT *, CASE
      WHEN r5 < 0.006 THEN [DATE '2022-11-25', DATE '2023-11-24', DATE '2024-11-29', DATE '2025-11-28'][1 + ri(r6, 4)]
      WHEN r5 < 0.075 THEN make_date(2022 + CAST(ri(r6, 4) AS INTEGER), 11, 15) + CAST(ri(r7, CASE WHEN r6 >= 0.75 THEN 16 ELSE 40 END) AS INTEGER)
      ELSE DATE '2022-01-01' + CAST(ri(CASE WHEN r1 < 0.55 THEN greatest(r2, r3) ELSE r4 END, 1430) AS INTEGER)
    END AS order_date
  FROM b
)
SELECT d.*, CASE WHEN r13 < 0.012 AND tc.customer_id IS NOT NULL THEN tc.customer_id ELSE 1 + ri(CASE WHEN r8 < 0.5 THEN r9 * (0.25 + 0.75 * r9) ELSE r9 END, cum.n) END AS customer_id
FROM d JOIN _cust_cum cum ON cum.day = d.order_date
LEFT JOIN _test_cust tc ON tc.k = 1 + ri(r14, (SELECT count(*) FROM _test_cust))
""")

step("_ord", """
CREATE TEMP TABLE _ord AS
WITH c AS (
  SELECT o.*, cu.ci, cu.country_code, cu.currency_code, cu.home_store_id, co.first_store, co.n_stores, co.online_store,
    co.tax_rate, co.price_factor, co.free_ship_over, co.ship_fee,
    CASE WHEN r10 < 0.38 THEN 1 WHEN r10 < 0.80 THEN 2
         WHEN r10 < 0.94 THEN CASE WHEN order_date >= DATE '2023-03-01' THEN 3 ELSE 2 END
         WHEN r10 < 0.98 THEN CASE WHEN cu.country_code = 'US' THEN 4 ELSE 2 END ELSE 5 END AS channel_id
  FROM _ord0 o JOIN _cust cu USING (customer_id) JOIN _country co ON co.ci = cu.ci
), s AS (
  SELECT c.*, CASE WHEN channel_id <> 1 THEN online_store WHEN r11 < 0.7 THEN home_store_id ELSE first_store + ri(r12, n_stores) END AS store_id,
    CASE WHEN channel_id = 1 THEN 32400 + ri(r15, 43200) ELSE 21600 + ri(r15, 64800) END AS local_secs
  FROM c
), t AS (
  SELECT s.*, sto.utc_offset_minutes,
    ts(order_date, local_secs - sto.utc_offset_minutes * 60) AS ordered_at,
    DATE '2025-11-30' - order_date AS age_days
  FROM s JOIN _store sto USING (store_id)
), st AS (
  SELECT t.*,
    CASE WHEN r16 < 0.035 THEN 'cancelled'
         WHEN r16 < 0.045 THEN CASE WHEN order_date > DATE '2024-06-30' THEN 'void' ELSE 'cancelled' END
         WHEN channel_id = 1 THEN 'completed'
         WHEN age_days <= 1 THEN 'processing' WHEN age_days <= 4 THEN 'shipped' ELSE 'completed' END AS status,
    CASE WHEN channel_id <> 1 AND r17 < 0.07 THEN
      CASE WHEN order_date IN (DATE '2022-11-25', DATE '2022-11-26', DATE '2022-11-27', DATE '2022-11-28') THEN 'BF22'
           WHEN order_date BETWEEN DATE '2023-11-24' AND DATE '2023-11-27' THEN 'BF23'
           WHEN order_date BETWEEN DATE '2024-11-29' AND DATE '2024-12-02' THEN 'BF24'
           WHEN order_date BETWEEN DATE '2025-11-28' AND DATE '2025-11-30' THEN 'BF25'
           WHEN r18 < 0.3 THEN 'WELCOME15' ELSE 'SAVE10-' || strftime(order_date, '%Y%m') END END AS coupon_code
  FROM t
)
SELECT row_number() OVER (ORDER BY ordered_at, i) AS order_id, st.*,
  CASE WHEN coupon_code LIKE 'BF%' THEN 0.20 WHEN coupon_code = 'WELCOME15' THEN 0.15 WHEN coupon_code IS NOT NULL THEN 0.10 END AS coupon_pct,
  CASE WHEN r19 < 0.006 THEN ordered_at + INTERVAL 3 HOUR END AS deleted_at,
  CASE WHEN channel_id = 1 THEN order_date ELSE least(order_date + 1 + CAST(ri(u(i, 130), 3) AS INTEGER), DATE '2025-11-30') END AS ship_date
FROM st
""")

step("_line", """
CREATE TEMP TABLE _line AS
WITH l AS (
  SELECT o.order_id, o.i, l AS line_no, o.order_date, o.status, o.price_factor, o.coupon_pct,
    u(o.i * 8 + l, 121) AS a, u(o.i * 8 + l, 122) AS b, u(o.i * 8 + l, 123) AS q, u(o.i * 8 + l, 124) AS d1,
    u(o.i * 8 + l, 125) AS d2, u(o.i * 8 + l, 126) AS c
  FROM _ord o, range(1, 5) r(l) WHERE l <= 1 + ri(u(o.i, 120), 4)
), p AS (
  SELECT l.*, 1 + ri(CASE WHEN b < 0.5 THEN a * a ELSE a END, 1200) AS p0 FROM l
), p2 AS (
  SELECT p.*, CASE WHEN x0.launched_date > p.order_date THEN p0 - 900
                   WHEN x0.discontinued_date < p.order_date THEN p0 + 1 ELSE p0 END AS product_id
  FROM p JOIN _prod x0 ON x0.product_id = p0
), pr AS (
  SELECT p2.*, CASE WHEN order_date < DATE '2023-04-01' THEN x.p1 WHEN order_date < DATE '2025-02-01' THEN x.p2 ELSE x.p3 END AS list_usd,
    CASE WHEN q < 0.72 THEN 1 WHEN q < 0.90 THEN 2 WHEN q < 0.97 THEN 3 ELSE 4 + ri(u(i * 8 + line_no, 127), 3) END AS quantity,
    1 + CAST(floor((order_date - DATE '2022-01-01') / 21) AS INTEGER) AS promotion_id
  FROM p2 JOIN _prod x USING (product_id)
), pp AS (
  SELECT pr.*, CAST(xround(list_usd * price_factor, 2) AS DECIMAL(10,2)) AS unit_price,
    coalesce(coupon_pct, CASE WHEN d1 < 0.16 THEN CAST(sp.discount_pct AS DOUBLE) / 100 END) AS pct,
    coupon_pct IS NULL AND d1 < 0.16 AS promo
  FROM pr LEFT JOIN sales.promotions sp USING (promotion_id)
)
SELECT row_number() OVER (ORDER BY order_id, line_no) AS order_line_id, order_id, i, line_no, product_id, quantity, unit_price,
  CAST(coalesce(xround(quantity * unit_price * pct, 2), 0) AS DECIMAL(10,2)) AS discount_amount,
  CASE WHEN status IN ('cancelled', 'void') THEN 'cancelled' WHEN status = 'processing' THEN 'open'
       WHEN line_no >= 2 AND c < 0.012 THEN 'cancelled' ELSE 'fulfilled' END AS line_status,
  promo, promotion_id, list_usd
FROM pp
""")

step("orders.order_lines", """
INSERT INTO orders.order_lines BY NAME
SELECT order_line_id, order_id, line_no, product_id, quantity, unit_price, discount_amount, line_status FROM _line
""")

step("_ordamt", """
CREATE TEMP TABLE _ordamt AS
WITH a AS (
  SELECT o.order_id,
    sum(CASE WHEN o.status IN ('cancelled', 'void') OR l.line_status <> 'cancelled' THEN l.quantity * l.unit_price ELSE 0 END) AS subtotal,
    sum(CASE WHEN o.status IN ('cancelled', 'void') OR l.line_status <> 'cancelled' THEN l.discount_amount ELSE 0 END) AS discount
  FROM _ord o JOIN _line l USING (order_id) GROUP BY o.order_id
)
SELECT a.order_id, CAST(subtotal AS DECIMAL(14,2)) AS subtotal_amount, CAST(discount AS DECIMAL(14,2)) AS discount_amount,
  CAST(xround((subtotal - discount) * o.tax_rate, 2) AS DECIMAL(14,2)) AS tax_amount,
  CAST(CASE WHEN o.channel_id <> 1 AND subtotal - discount < o.free_ship_over THEN o.ship_fee ELSE 0 END AS DECIMAL(14,2)) AS shipping_amount
FROM a JOIN _ord o USING (order_id)
""")

step("orders.orders", """
INSERT INTO orders.orders BY NAME
SELECT o.order_id, customer_id, store_id, channel_id, ordered_at, order_date, status, currency_code,
  a.subtotal_amount, a.discount_amount, a.tax_amount, a.shipping_amount,
  a.subtotal_amount - a.discount_amount + a.tax_amount + a.shipping_amount AS total_amount,
  coupon_code, CASE WHEN order_date <= DATE '2024-06-30' THEN 'erp_legacy' ELSE 'erp_nova' END AS source_system, deleted_at
FROM _ord o JOIN _ordamt a USING (order_id)
""")

step("_oo", """
CREATE TEMP TABLE _oo AS
SELECT o.*, f.rate, c.is_test, x.ship_date, x.i, x.utc_offset_minutes, x.country_code
FROM orders.orders o JOIN _fx_day f ON f.day = o.order_date AND f.currency_code = o.currency_code
JOIN _cust c USING (customer_id) JOIN _ord x USING (order_id)
""")

step("orders.order_promotions", """
INSERT INTO orders.order_promotions BY NAME
SELECT order_line_id, promotion_id, discount_amount FROM _line WHERE promo AND discount_amount > 0
""")

step("orders.orders_old", """
INSERT INTO orders.orders_old BY NAME
SELECT o.order_id, o.customer_id, c.first_name || ' ' || c.last_name AS customer_name, c.country_code AS customer_country,
  d.segment AS customer_segment, o.store_id, ch.channel_name, o.ordered_at, o.order_date, o.status, o.currency_code,
  o.total_amount, CAST(xround(o.total_amount * o.rate, 2) AS DECIMAL(14,2)) AS total_amount_usd, o.deleted_at
FROM _oo o JOIN sales.customers c USING (customer_id) JOIN sales.channels ch USING (channel_id)
JOIN sales.dim_customer d ON d.customer_id = o.customer_id AND DATE '2024-06-30' >= d.valid_from AND DATE '2024-06-30' < d.valid_to
WHERE o.order_date <= DATE '2024-06-30'
""")

step("orders.order_lines_bak", """
INSERT INTO orders.order_lines_bak BY NAME
SELECT l.order_line_id, l.order_id, l.line_no, l.product_id, l.quantity,
  CASE WHEN u(l.order_line_id, 140) < 0.03 THEN CAST(xround(l.unit_price * 1.1, 2) AS DECIMAL(10,2)) ELSE l.unit_price END AS unit_price,
  l.discount_amount, l.line_status
FROM _line l JOIN _ord o USING (order_id) WHERE o.order_date <= DATE '2023-12-31'
""")

# ---------------------------------------------------------------- revenue
step("_rev", """
CREATE TEMP TABLE _rev AS
WITH b AS (
  SELECT l.order_line_id, l.order_id, o.store_id, o.ship_date AS recognized_date, o.currency_code, o.channel_id,
    CAST(l.quantity * l.unit_price - l.discount_amount AS DECIMAL(14,2)) AS amount_local,
    CAST(l.quantity * l.unit_price AS DECIMAL(14,2)) AS gross_local, o.rate
  FROM _line l JOIN _oo o USING (order_id)
  WHERE l.line_status = 'fulfilled' AND o.status NOT IN ('cancelled', 'void') AND o.deleted_at IS NULL AND NOT o.is_test
), s AS (
  SELECT b.*, 0 AS dup, CASE WHEN recognized_date > DATE '2025-11-27' THEN 'pending' ELSE 'posted' END AS posting_status FROM b
  UNION ALL
  SELECT b.*, 1, 'reversed' FROM b WHERE u(order_line_id, 131) < 0.01 AND recognized_date <= DATE '2025-11-27'
)
SELECT row_number() OVER (ORDER BY recognized_date, order_line_id, dup) AS revenue_id, s.*,
  CAST(xround(amount_local * rate, 2) AS DECIMAL(14,2)) AS amount_usd,
  CASE WHEN posting_status = 'pending' THEN NULL
       ELSE ts(recognized_date + 1 + dup * 3, 7200 + ri(u(order_line_id * 2 + dup, 132), 14400)) END AS posted_at,
  CASE WHEN recognized_date <= DATE '2024-06-30' THEN 'erp_legacy' ELSE 'erp_nova' END AS source_system
FROM s
""")

step("finance.revenue_recognized", """
INSERT INTO finance.revenue_recognized BY NAME
SELECT revenue_id, order_id, order_line_id, store_id, store_id AS cost_center_id, recognized_date, currency_code,
       amount_local, rate AS fx_rate, amount_usd, posting_status, posted_at, source_system
FROM _rev
""")

step("finance.revenue_recognized_v1", """
INSERT INTO finance.revenue_recognized_v1 BY NAME
SELECT revenue_id, order_id, order_line_id, store_id, store_id AS cost_center_id, recognized_date, currency_code,
       amount_local, rate AS fx_rate, amount_usd, posting_status, posted_at, source_system
FROM _rev WHERE recognized_date <= DATE '2024-06-30'
UNION ALL
SELECT 90000000 + revenue_id, order_id, order_line_id, store_id, store_id, recognized_date, currency_code,
       gross_local, rate, CAST(xround(gross_local * rate, 2) AS DECIMAL(14,2)), 'posted',
       ts(recognized_date + 1, 3600), 'erp_legacy'
FROM _rev WHERE recognized_date > DATE '2024-06-30' AND channel_id = 1 AND dup = 0
""")

step("legacy.revenue_daily", """
INSERT INTO legacy.revenue_daily
SELECT recognized_date, store_id, sum(amount_usd) FROM _rev
WHERE posting_status = 'posted' AND recognized_date <= DATE '2024-06-30' GROUP BY ALL
""")

step("_inv", """
CREATE TEMP TABLE _inv AS
SELECT row_number() OVER (ORDER BY o.order_id) + 5000000 AS invoice_id, o.*, c.segment,
  CASE WHEN c.segment = 'Business' THEN o.order_date + 30 ELSE o.order_date END AS due_date,
  CASE WHEN c.segment = 'Business' THEN o.order_date + 5 + CAST(ri(u(o.order_id, 150), 40) AS INTEGER) ELSE o.order_date END AS paid_date
FROM _oo o JOIN _cust c USING (customer_id)
WHERE o.status NOT IN ('cancelled', 'void') AND o.deleted_at IS NULL
""")

step("sales.invoices", """
INSERT INTO sales.invoices BY NAME
SELECT invoice_id, order_id, customer_id, order_date AS invoice_date, due_date, currency_code, total_amount AS total_local,
       CASE WHEN paid_date > DATE '2025-11-30' THEN 'open' ELSE 'paid' END AS status
FROM _inv
""")

step("_bill", """
CREATE TEMP TABLE _bill AS
SELECT i.invoice_id, i.order_id, 'merchandise' AS line_type, l.order_line_id, i.order_date AS billed_date, i.currency_code,
  CAST(l.quantity * l.unit_price - l.discount_amount AS DECIMAL(14,2)) AS amount_local, i.rate, i.segment, 1 AS k
FROM _inv i JOIN _line l USING (order_id) WHERE l.line_status <> 'cancelled'
UNION ALL SELECT invoice_id, order_id, 'tax', NULL, order_date, currency_code, tax_amount, rate, segment, 2 FROM _inv
UNION ALL SELECT invoice_id, order_id, 'shipping', NULL, order_date, currency_code, shipping_amount, rate, segment, 3 FROM _inv WHERE shipping_amount > 0
""")

step("sales.rev_billed", """
INSERT INTO sales.rev_billed BY NAME
SELECT row_number() OVER (ORDER BY invoice_id, k, order_line_id) AS billed_line_id, invoice_id, order_id, line_type, billed_date,
       currency_code, CAST(xround(amount_local * rate, 2) AS DECIMAL(14,2)) AS amount_usd
FROM _bill
""")

step("sales.invoice_lines", """
INSERT INTO sales.invoice_lines BY NAME
SELECT row_number() OVER (ORDER BY invoice_id, k, order_line_id) + 700000000 AS invoice_line_id, invoice_id, order_line_id, line_type, amount_local
FROM _bill WHERE segment = 'Business'
""")

step("finance.payments", """
INSERT INTO finance.payments BY NAME
WITH p AS (
  SELECT invoice_id, paid_date, total_amount, currency_code, u(invoice_id, 151) AS r FROM _inv
  WHERE segment = 'Business' AND paid_date <= DATE '2025-11-30'
)
SELECT invoice_id * 2 AS payment_id, invoice_id, paid_date,
  CASE WHEN r < 0.05 THEN CAST(xround(total_amount / 2, 2) AS DECIMAL(14,2)) ELSE total_amount END AS amount_local,
  currency_code, pick(['wire', 'ach', 'card', 'cheque'], u(invoice_id, 152)) AS method FROM p
UNION ALL
SELECT invoice_id * 2 + 1, invoice_id, least(paid_date + 10, DATE '2025-11-30'), total_amount - CAST(xround(total_amount / 2, 2) AS DECIMAL(14,2)),
  currency_code, 'wire' FROM p WHERE r < 0.05
""")

step("sales.bookings_gross", """
INSERT INTO sales.bookings_gross BY NAME
SELECT order_id, CAST(ordered_at AS DATE) AS booking_date, store_id, status AS order_status,
       CAST(xround(subtotal_amount * rate, 2) AS DECIMAL(14,2)) AS gross_amount_usd
FROM _oo
""")

step("sales.daily_sales_summary", """
INSERT INTO sales.daily_sales_summary BY NAME
SELECT CAST(o.ordered_at AS DATE) AS summary_date, o.store_id, CAST(count(DISTINCT o.order_id) AS INTEGER) AS orders_count,
  CAST(sum(l.quantity) AS INTEGER) AS units_sold,
  sum(CAST(xround((l.quantity * l.unit_price - l.discount_amount) * o.rate, 2) AS DECIMAL(14,2))) AS net_sales_usd,
  sum(CAST(xround(l.quantity * l.unit_price * o.rate, 2) AS DECIMAL(14,2))) AS gross_sales_usd
FROM _oo o JOIN _line l USING (order_id)
WHERE o.status NOT IN ('cancelled', 'void') AND l.line_status <> 'cancelled'
GROUP BY ALL
""")

step("legacy.orders", """
INSERT INTO legacy.orders
SELECT order_id, customer_id, order_date, store_id, CASE WHEN status = 'cancelled' THEN 'X' ELSE 'C' END,
       CAST(xround(total_amount * rate, 2) AS DECIMAL(14,2))
FROM _oo WHERE order_date <= DATE '2024-06-30'
""")

step("legacy.order_items", """
INSERT INTO legacy.order_items
SELECT l.order_id, l.line_no, l.product_id, l.quantity, CAST(xround((l.quantity * l.unit_price - l.discount_amount) * o.rate, 2) AS DECIMAL(14,2))
FROM _line l JOIN _oo o USING (order_id) WHERE o.order_date <= DATE '2024-06-30' AND l.line_status <> 'cancelled'
""")

step("legacy.aov_monthly", """
INSERT INTO legacy.aov_monthly
SELECT date_trunc('month', order_date), count(*), CAST(xround(avg(total_amount * rate), 2) AS DECIMAL(12,2))
FROM _oo WHERE order_date <= DATE '2024-06-30' GROUP BY ALL
""")

# ---------------------------------------------------------------- order operations
step("_ship", """
CREATE TEMP TABLE _ship AS
SELECT o.order_id, o.i, o.country_code, o.ship_date, o.status, o.ordered_at,
  CASE o.country_code WHEN 'US' THEN pick([1, 2, 3, 7], u(o.i, 160)) WHEN 'CA' THEN 4 WHEN 'GB' THEN 5 WHEN 'DE' THEN 6 ELSE 8 END AS warehouse_id,
  CASE WHEN o.country_code IN ('US', 'CA') THEN pick([1, 2, 3, 4], u(o.i, 161)) ELSE pick([5, 6], u(o.i, 161)) END AS carrier_id,
  ts(o.ship_date, 50400 + ri(u(o.i, 162), 21600)) AS shipped_at
FROM _ord o
WHERE o.channel_id <> 1 AND o.status IN ('completed', 'shipped') AND o.deleted_at IS NULL
""")

step("ops.carriers", """
INSERT INTO ops.carriers VALUES
 (1, 'UPS', 'standard'), (2, 'FedEx', 'express'), (3, 'USPS', 'standard'), (4, 'Canada Post', 'standard'),
 (5, 'DHL', 'express'), (6, 'Royal Mail', 'standard')
""")

step("ops.warehouses", """
INSERT INTO ops.warehouses VALUES
 (1, 'Columbus DC', 'US', FALSE), (2, 'Reno DC', 'US', FALSE), (3, 'Atlanta DC', 'US', FALSE), (4, 'Toronto DC', 'CA', FALSE),
 (5, 'Milton Keynes DC', 'GB', FALSE), (6, 'Duisburg DC', 'DE', FALSE), (7, 'ShipFast 3PL Dallas', 'US', TRUE),
 (8, 'EuroLogistics 3PL Lille', 'FR', TRUE)
""")

step("orders.shipments", """
INSERT INTO orders.shipments BY NAME
SELECT order_id + 30000000 AS shipment_id, order_id, warehouse_id, carrier_id, shipped_at,
  CASE WHEN status = 'shipped' THEN NULL
       ELSE shipped_at + to_seconds(CAST(86400 * (1 + ri(u(i, 163), CASE WHEN carrier_id IN (2, 5) THEN 2 ELSE 5 END)) + ri(u(i, 164), 30000) AS BIGINT)) END AS delivered_at,
  CAST(xround(3.5 + u(i, 165) * 9, 2) AS DECIMAL(10,2)) AS shipping_cost_usd
FROM _ship
""")

step("ops.shipment_tracking", """
INSERT INTO ops.shipment_tracking BY NAME
WITH s AS (SELECT * FROM orders.shipments WHERE shipped_at >= TIMESTAMP '2025-01-01'),
e AS (
  SELECT shipment_id, 1 AS k, 'picked_up' AS scan_type, shipped_at AS scanned_at FROM s
  UNION ALL SELECT shipment_id, 2, 'in_transit', shipped_at + INTERVAL 9 HOUR FROM s WHERE shipped_at + INTERVAL 9 HOUR < TIMESTAMP '2025-12-01'
  UNION ALL SELECT shipment_id, 3, 'out_for_delivery', delivered_at - INTERVAL 5 HOUR FROM s WHERE delivered_at IS NOT NULL
  UNION ALL SELECT shipment_id, 4, 'delivered', delivered_at FROM s WHERE delivered_at IS NOT NULL
)
SELECT shipment_id * 4 + k AS tracking_event_id, shipment_id, scan_type, scanned_at FROM e
""")

step("orders.order_status_history", """
INSERT INTO orders.order_status_history BY NAME
WITH o AS (SELECT o.*, s.shipped_at, s.delivered_at FROM _ord o LEFT JOIN orders.shipments s USING (order_id) WHERE o.order_date >= DATE '2024-07-01'),
e AS (
  SELECT order_id, 1 AS k, 'created' AS status, ordered_at AS changed_at FROM o
  UNION ALL SELECT order_id, 2, 'paid', ordered_at + INTERVAL 2 MINUTE FROM o WHERE status <> 'cancelled'
  UNION ALL SELECT order_id, 3, 'shipped', shipped_at FROM o WHERE shipped_at IS NOT NULL
  UNION ALL SELECT order_id, 4, 'delivered', delivered_at FROM o WHERE delivered_at IS NOT NULL
  UNION ALL SELECT order_id, 4, 'completed', ordered_at + INTERVAL 5 MINUTE FROM o WHERE channel_id = 1 AND status = 'completed'
  UNION ALL SELECT order_id, 5, status, ordered_at + to_seconds(CAST(3600 + ri(u(i, 166), 80000) AS BIGINT)) FROM o WHERE status IN ('cancelled', 'void')
)
SELECT order_id * 8 + k AS status_event_id, order_id, status, changed_at FROM e
""")

step("orders.payments", """
INSERT INTO orders.payments BY NAME
WITH o AS (SELECT * FROM _ord WHERE deleted_at IS NULL),
e AS (
  SELECT o.order_id, 1 AS k, 'capture' AS txn_type, a.subtotal_amount - a.discount_amount + a.tax_amount + a.shipping_amount AS amount_local,
    CASE WHEN o.channel_id = 1 THEN pick(['card', 'card', 'card', 'cash', 'gift_card'], u(o.i, 167))
         ELSE pick(['card', 'card', 'paypal', 'gift_card'], u(o.i, 167)) END AS method, o.ordered_at + INTERVAL 1 MINUTE AS txn_at
  FROM o JOIN _ordamt a USING (order_id) WHERE o.status <> 'cancelled'
  UNION ALL
  SELECT o.order_id, 2, 'void', a.subtotal_amount - a.discount_amount + a.tax_amount + a.shipping_amount, 'card', o.ordered_at + INTERVAL 2 HOUR
  FROM o JOIN _ordamt a USING (order_id) WHERE o.status = 'void'
)
SELECT order_id * 4 + k AS payment_txn_id, order_id, txn_type, amount_local, method, txn_at FROM e
""")

step("orders.pos_transactions", """
INSERT INTO orders.pos_transactions BY NAME
SELECT order_id + 60000000 AS pos_txn_id, order_id, store_id, CAST(1 + ri(u(i, 168), 8) AS INTEGER) AS register_no,
  CAST(1 + ri(u(i, 169), 900) AS INTEGER) AS cashier_employee_id,
  ordered_at + to_minutes(CAST(utc_offset_minutes AS BIGINT)) AS txn_local_ts
FROM _ord WHERE channel_id = 1 AND deleted_at IS NULL
""")

step("orders.order_notes", """
INSERT INTO orders.order_notes BY NAME
SELECT order_id * 2 AS note_id, order_id, pick(['customer', 'agent', 'system'], u(i, 170)) AS note_type,
  pick(['Please leave at the back door', 'Gift wrap requested', 'Customer called about delivery date', 'Address corrected by agent',
        'Fraud check passed', 'Duplicate order - removed', 'Split shipment', 'Price match applied'], u(i, 171)) AS note_text,
  ordered_at + INTERVAL 30 MINUTE AS created_at
FROM _ord WHERE u(i, 172) < 0.03 OR deleted_at IS NOT NULL
""")

step("orders.backorders", """
INSERT INTO orders.backorders BY NAME
SELECT l.order_line_id + 80000000 AS backorder_id, l.order_line_id, o.ordered_at + INTERVAL 1 HOUR AS created_at,
  o.order_date + CAST(5 + ri(u(l.order_line_id, 173), 20) AS INTEGER) AS expected_date,
  CASE WHEN o.order_date < DATE '2025-11-01' THEN ts(o.order_date + CAST(3 + ri(u(l.order_line_id, 174), 25) AS INTEGER), 36000) END AS resolved_at
FROM _line l JOIN _ord o USING (order_id) WHERE u(l.order_line_id, 175) < 0.01 AND o.channel_id <> 1
""")

step("orders.gift_cards", """
INSERT INTO orders.gift_cards BY NAME
SELECT g + 4000000 AS gift_card_id, DATE '2022-01-01' + CAST(ri(u(g, 176), 1430) AS INTEGER) AS issued_date,
  CAST(pick([25, 50, 75, 100, 150, 200], u(g, 177)) AS DECIMAL(10,2)) AS initial_value_local,
  pick(['USD', 'USD', 'USD', 'CAD', 'GBP', 'EUR'], u(g, 178)) AS currency_code,
  CAST(CASE WHEN u(g, 180) < 0.6 THEN 0 ELSE xround(pick([25, 50, 75, 100, 150, 200], u(g, 177)) * u(g, 181), 2) END AS DECIMAL(10,2)) AS remaining_local
FROM range(1, $N_GIFT + 1) t(g)
""")

# ---------------------------------------------------------------- returns
step("returns.return_reasons", """
INSERT INTO returns.return_reasons VALUES
 (1, 'SIZE', 'Wrong size or fit', FALSE), (2, 'DEFECT', 'Defective or damaged', TRUE), (3, 'NOT_AS_DESC', 'Not as described', FALSE),
 (4, 'CHANGED_MIND', 'Changed mind', FALSE), (5, 'LATE', 'Arrived too late', FALSE), (6, 'WRONG_ITEM', 'Wrong item sent', FALSE),
 (7, 'BETTER_PRICE', 'Found a better price', FALSE), (8, 'DOA', 'Dead on arrival', TRUE), (9, 'QUALITY', 'Poor quality', TRUE),
 (10, 'OTHER', 'Other', FALSE)
""")

step("returns.return_policies", """
INSERT INTO returns.return_policies VALUES
 ('US', 30, TRUE, DATE '2019-01-01'), ('CA', 30, TRUE, DATE '2019-01-01'), ('GB', 28, FALSE, DATE '2019-01-01'),
 ('DE', 30, FALSE, DATE '2019-01-01'), ('FR', 30, FALSE, DATE '2019-01-01')
""")

step("_ret", """
CREATE TEMP TABLE _ret AS
WITH c AS (
  SELECT o.order_id, o.i, o.customer_id, o.channel_id, o.ordered_at, o.rate, o.currency_code,
    o.ordered_at + to_seconds(CAST(86400 * (2 + ri(u(o.i, 402), 28)) + ri(u(o.i, 403), 40000) AS BIGINT)) AS requested_at
  FROM _oo o
  WHERE o.status IN ('completed', 'shipped') AND o.deleted_at IS NULL AND u(o.order_id, 401) < CASE WHEN o.channel_id = 1 THEN 0.05 ELSE 0.11 END
), f AS (
  SELECT c.*, DATE '2025-11-30' - CAST(requested_at AS DATE) AS age, u(i, 404) AS rs FROM c WHERE requested_at < TIMESTAMP '2025-11-30 23:00:00'
)
SELECT order_id + 20000000 AS return_id, f.*,
  CASE WHEN age < 3 THEN 'requested' WHEN age < 7 THEN CASE WHEN rs < 0.5 THEN 'received' ELSE 'requested' END
       WHEN rs < 0.80 THEN 'refunded' WHEN rs < 0.87 THEN 'rejected' WHEN rs < 0.93 THEN 'cancelled' ELSE 'received' END AS status
FROM f
""")

step("returns.returns", """
INSERT INTO returns.returns BY NAME
SELECT return_id, order_id, customer_id, requested_at,
  CASE WHEN status IN ('received', 'refunded', 'rejected') THEN least(CAST(requested_at AS DATE) + CAST(2 + ri(u(i, 405), 4) AS INTEGER), DATE '2025-11-30') END AS received_date,
  status, CAST(1 + ri(u(i, 406), 10) AS INTEGER) AS reason_id,
  CASE WHEN channel_id = 1 OR u(i, 407) < 0.2 THEN 'store' ELSE 'mail' END AS return_channel
FROM _ret
""")

step("_retl", """
CREATE TEMP TABLE _retl AS
SELECT r.return_id, r.status, r.rate, r.currency_code, r.requested_at, r.order_id, l.order_line_id, l.product_id, l.quantity, l.unit_price, l.discount_amount,
  CAST(1 + ri(u(l.order_line_id, 410), l.quantity) AS INTEGER) AS quantity_returned,
  pick(['resellable', 'resellable', 'resellable', 'damaged', 'missing'], u(l.order_line_id, 411)) AS condition
FROM _ret r JOIN _line l USING (order_id)
WHERE l.line_status = 'fulfilled' AND (l.line_no = 1 OR u(l.order_line_id, 412) < 0.4)
""")

step("returns.return_lines", """
INSERT INTO returns.return_lines BY NAME
SELECT order_line_id + 40000000 AS return_line_id, return_id, order_line_id, quantity_returned,
  CASE WHEN status IN ('received', 'refunded', 'rejected') THEN condition END AS condition
FROM _retl
""")

step("_refund", """
CREATE TEMP TABLE _refund AS
SELECT r.return_id, r.currency_code, r.rate, rr.received_date,
  sum(CAST(xround(l.quantity_returned * (l.quantity * l.unit_price - l.discount_amount) / l.quantity, 2) AS DECIMAL(14,2))) AS amount_local
FROM _ret r JOIN returns.returns rr USING (return_id) JOIN _retl l USING (return_id)
WHERE r.status = 'refunded' GROUP BY ALL
""")

step("returns.refunds", """
INSERT INTO returns.refunds BY NAME
WITH f AS (SELECT *, u(return_id, 420) < 0.03 AS failed,
  ts(least(received_date + CAST(1 + ri(u(return_id, 421), 3) AS INTEGER), DATE '2025-11-30'), 36000 + ri(u(return_id, 422), 30000)) AS t0 FROM _refund)
SELECT return_id * 2 AS refund_id, return_id, t0 AS refunded_at, amount_local, currency_code,
  pick(['original_payment', 'original_payment', 'original_payment', 'store_credit', 'gift_card'], u(return_id, 423)) AS method,
  CASE WHEN failed THEN 'failed' ELSE 'completed' END AS status FROM f
UNION ALL
SELECT return_id * 2 + 1, return_id, least(t0 + to_days(CAST(2 + ri(u(return_id, 424), 4) AS INTEGER)), TIMESTAMP '2025-11-30 18:00:00'), amount_local, currency_code, 'original_payment', 'completed' FROM f WHERE failed
""")

step("returns.inspections", """
INSERT INTO returns.inspections BY NAME
SELECT return_id + 1000000 AS inspection_id, return_id, ts(received_date, 39600) AS inspected_at,
  pick(['A', 'A', 'B', 'C', 'scrap'], u(return_id, 430)) AS grade, CAST(1 + ri(u(return_id, 431), 1400) AS INTEGER) AS inspector_employee_id
FROM returns.returns WHERE received_date IS NOT NULL
""")

step("returns.restock_events", """
INSERT INTO returns.restock_events BY NAME
SELECT rl.return_line_id + 1000000 AS restock_id, rl.return_line_id, coalesce(s.warehouse_id, 1) AS warehouse_id, rl.quantity_returned AS quantity,
  ts(r.received_date + 1, 43200) AS restocked_at
FROM returns.return_lines rl JOIN returns.returns r USING (return_id) LEFT JOIN _ship s USING (order_id)
WHERE rl.condition = 'resellable' AND r.received_date < DATE '2025-11-30'
""")

step("returns.return_shipping_labels", """
INSERT INTO returns.return_shipping_labels BY NAME
SELECT r.return_id + 2000000 AS label_id, r.return_id, coalesce(s.carrier_id, 1) AS carrier_id,
  CAST(xround(4 + u(r.return_id, 432) * 6, 2) AS DECIMAL(8,2)) AS label_cost_usd, r.requested_at + INTERVAL 10 MINUTE AS created_at
FROM returns.returns r LEFT JOIN _ship s USING (order_id) WHERE r.return_channel = 'mail'
""")

step("returns.exchange_orders", """
INSERT INTO returns.exchange_orders BY NAME
SELECT return_id + 3000000 AS exchange_id, return_id, NULL::BIGINT AS new_order_id, requested_at + INTERVAL 1 DAY AS created_at
FROM _ret WHERE status = 'refunded' AND u(return_id, 433) < 0.05
""")

step("returns.returns_old", """
INSERT INTO returns.returns_old BY NAME
SELECT l.return_id, l.order_id, l.order_line_id, l.product_id, l.quantity_returned AS units_returned,
  CASE WHEN l.status = 'refunded' THEN CAST(xround(xround(l.quantity_returned * (l.quantity * l.unit_price - l.discount_amount) / l.quantity, 2) * l.rate, 2) AS DECIMAL(14,2)) END AS refund_usd,
  CAST(l.requested_at AS DATE) AS requested_date, l.status
FROM _retl l WHERE l.requested_at < TIMESTAMP '2024-07-01'
""")

step("legacy.returns", """
INSERT INTO legacy.returns
SELECT return_id, order_id, requested_date, sum(refund_usd) FROM returns.returns_old GROUP BY ALL
""")

# ---------------------------------------------------------------- marketing facts
step("marketing.campaign_spend", """
INSERT INTO marketing.campaign_spend BY NAME
WITH d AS (
  SELECT c.campaign_id, c.budget_usd, c.status, c.start_date, c.end_date, CAST(c.start_date + CAST(k AS INTEGER) AS DATE) AS spend_date
  FROM marketing.campaigns c, range(0, 61) t(k)
  WHERE c.start_date + CAST(k AS INTEGER) <= least(c.end_date, DATE '2025-11-30')
    AND (c.status <> 'cancelled' OR k < 5)
)
SELECT campaign_id, spend_date,
  CAST(floor(budget_usd * 100 / (end_date - start_date + 1) * (0.6 + 0.8 * u(campaign_id * 100 + (spend_date - start_date), 280))) AS BIGINT) AS spend_amount,
  CAST(1000 + ri(u(campaign_id * 100 + (spend_date - start_date), 281), 90000) AS BIGINT) AS impressions,
  CAST(10 + ri(u(campaign_id * 100 + (spend_date - start_date), 282), 1500) AS BIGINT) AS clicks
FROM d
""")

step("_attr", """
CREATE TEMP TABLE _attr AS
WITH o AS (SELECT order_id, i, customer_id, country_code, order_date, ordered_at FROM _ord
           WHERE channel_id <> 1 AND u(i, 290) < 0.3),
m AS (
  SELECT o.*, c.campaign_id, row_number() OVER (PARTITION BY o.order_id ORDER BY u(o.i * 200 + c.campaign_id, 291), c.campaign_id) AS rk
  FROM o JOIN marketing.campaigns c ON c.country_code = o.country_code AND c.start_date <= o.order_date
       AND c.end_date >= o.order_date - 14 AND c.status <> 'cancelled'
), k AS (
  SELECT m.*, least(1 + ri(u(i, 292), 3), count(*) OVER (PARTITION BY order_id)) AS kk FROM m
)
SELECT * FROM k WHERE rk <= kk
""")

step("marketing.order_attribution", """
INSERT INTO marketing.order_attribution BY NAME
SELECT order_id, campaign_id, 'last_touch' AS model, CAST(1 AS DECIMAL(6,4)) AS credit FROM _attr WHERE rk = 1
UNION ALL SELECT order_id, campaign_id, 'first_touch', 1 FROM _attr WHERE rk = kk
UNION ALL SELECT order_id, campaign_id, 'linear', CAST(xround(1.0 / kk, 4) AS DECIMAL(6,4)) FROM _attr
""")

step("marketing.attribution_touches", """
INSERT INTO marketing.attribution_touches BY NAME
SELECT order_id * 4 + rk AS touch_id, customer_id, campaign_id,
  ordered_at - to_seconds(CAST(3600 * rk + ri(u(order_id * 4 + rk, 293), 3000) AS BIGINT)) AS touched_at,
  CASE WHEN u(order_id * 4 + rk, 294) < 0.7 THEN 'click' ELSE 'view' END AS touch_type
FROM _attr
""")

step("marketing.coupon_redemptions", """
INSERT INTO marketing.coupon_redemptions BY NAME
SELECT order_id + 9000000 AS redemption_id, coupon_code, order_id, customer_id, ordered_at AS redeemed_at
FROM _ord WHERE coupon_code IS NOT NULL AND deleted_at IS NULL
""")

step("marketing.email_sends", """
INSERT INTO marketing.email_sends BY NAME
SELECT c.campaign_id * 1000000 + cu.customer_id AS send_id, c.campaign_id, cu.customer_id,
  ts(c.start_date, 36000 + ri(u(cu.customer_id, 300 + c.campaign_id), 7200)) AS sent_at
FROM marketing.campaigns c JOIN sales.customers cu ON cu.marketing_opt_in AND cu.deleted_at IS NULL
  AND CAST(cu.signup_at AS DATE) < c.start_date AND u(cu.customer_id * 200 + c.campaign_id, 301) < 0.08
WHERE c.marketing_channel_id = 3 AND c.status <> 'planned'
""")

step("marketing.email_events", """
INSERT INTO marketing.email_events BY NAME
WITH e AS (
  SELECT send_id, 'open' AS event_type, 1 AS k, sent_at + to_seconds(CAST(600 + ri(u(send_id, 310), 86400) AS BIGINT)) AS event_at FROM marketing.email_sends WHERE u(send_id, 311) < 0.26
  UNION ALL SELECT send_id, 'open', 2, sent_at + to_seconds(CAST(700 + ri(u(send_id, 310), 86400) AS BIGINT)) FROM marketing.email_sends WHERE u(send_id, 311) < 0.26 AND u(send_id, 312) < 0.2
  UNION ALL SELECT send_id, 'click', 3, sent_at + to_seconds(CAST(900 + ri(u(send_id, 310), 86400) AS BIGINT)) FROM marketing.email_sends WHERE u(send_id, 311) < 0.05
  UNION ALL SELECT send_id, 'click', 4, sent_at + to_seconds(CAST(960 + ri(u(send_id, 310), 86400) AS BIGINT)) FROM marketing.email_sends WHERE u(send_id, 311) < 0.05 AND u(send_id, 313) < 0.15
  UNION ALL SELECT send_id, 'unsubscribe', 5, sent_at + INTERVAL 2 HOUR FROM marketing.email_sends WHERE u(send_id, 314) < 0.005
  UNION ALL SELECT send_id, 'bounce', 6, sent_at + INTERVAL 1 MINUTE FROM marketing.email_sends WHERE u(send_id, 315) < 0.01
)
SELECT row_number() OVER (ORDER BY send_id, k) AS email_event_id, send_id, event_type, event_at FROM e
""")

step("marketing.campaigns_v1", """
INSERT INTO marketing.campaigns_v1 BY NAME
WITH s AS (SELECT campaign_id, sum(spend_amount) AS cents FROM marketing.campaign_spend WHERE spend_date <= DATE '2024-06-30' GROUP BY ALL),
r AS (SELECT a.campaign_id, sum(rv.amount_usd) AS rev FROM marketing.order_attribution a JOIN _rev rv USING (order_id)
      WHERE a.model = 'last_touch' AND rv.posting_status = 'posted' AND rv.recognized_date <= DATE '2024-06-30' GROUP BY ALL)
SELECT c.campaign_id, c.campaign_name, ch.channel_name, c.start_date, c.end_date,
  CAST(coalesce(s.cents, 0) / 100 AS DECIMAL(14,2)) AS total_spend_usd, r.rev AS attributed_revenue_usd
FROM marketing.campaigns c JOIN marketing.channels ch USING (marketing_channel_id) LEFT JOIN s USING (campaign_id) LEFT JOIN r USING (campaign_id)
WHERE c.start_date <= DATE '2024-06-30'
""")

step("legacy.campaign_results", """
INSERT INTO legacy.campaign_results
SELECT v.campaign_id, v.total_spend_usd, CAST(count(DISTINCT a.order_id) AS INTEGER), coalesce(v.attributed_revenue_usd, 0)
FROM marketing.campaigns_v1 v LEFT JOIN marketing.order_attribution a ON a.campaign_id = v.campaign_id AND a.model = 'last_touch'
WHERE v.end_date <= DATE '2024-06-30' GROUP BY ALL
""")

step("marketing.audiences", """
INSERT INTO marketing.audiences VALUES
 (1, 'High value', DATE '2022-02-01'), (2, 'Lapsed 180d', DATE '2022-02-01'), (3, 'New this month', DATE '2022-03-15'),
 (4, 'Electronics fans', DATE '2022-06-01'), (5, 'Apparel fans', DATE '2022-06-01'), (6, 'Loyalty gold+', DATE '2023-01-10'),
 (7, 'Cart abandoners', DATE '2023-05-05'), (8, 'App users', DATE '2023-04-01'), (9, 'B2B accounts', DATE '2023-09-01'),
 (10, 'Holiday shoppers', DATE '2023-10-15'), (11, 'UK lookalike', DATE '2024-08-01'), (12, 'DACH lookalike', DATE '2024-08-01')
""")

step("marketing.audience_members", """
INSERT INTO marketing.audience_members BY NAME
SELECT a.audience_id, c.customer_id, greatest(a.created_date, CAST(c.signup_at AS DATE)) + CAST(ri(u(c.customer_id * 16 + a.audience_id, 320), 60) AS INTEGER) AS added_date
FROM marketing.audiences a JOIN _cust c ON u(c.customer_id * 16 + a.audience_id, 321) < 0.06
WHERE greatest(a.created_date, CAST(c.signup_at AS DATE)) + 60 <= DATE '2025-11-30'
""")

step("marketing.utm_sources", """
INSERT INTO marketing.utm_sources VALUES
 ('google', 1), ('bing', 1), ('google_ads', 1), ('facebook', 2), ('instagram', 2), ('tiktok', 2), ('pinterest', 2),
 ('newsletter', 3), ('crm', 3), ('email', 3), ('awin', 4), ('rakuten', 4), ('criteo', 5), ('dv360', 5), ('tv_qr', 6),
 ('creator', 7), ('youtube', 7), ('sms', 8), ('attentive', 8)
""")

step("marketing.influencers", """
INSERT INTO marketing.influencers BY NAME
SELECT k AS influencer_id, '@' || lower(pick($FN, u(k, 330))) || '_' || pick(['style', 'home', 'tech', 'fit', 'lifestyle'], u(k, 331)) || k AS handle,
  pick(['instagram', 'tiktok', 'youtube'], u(k, 332)) AS platform, CAST(xround(2000 + u(k, 333) * 48000, -2) AS DECIMAL(12,2)) AS fee_usd,
  (SELECT min(campaign_id) FROM marketing.campaigns c WHERE c.marketing_channel_id = 7 AND c.campaign_id >= 1 + ri(u(k, 334), 150)) AS campaign_id
FROM range(1, 26) t(k)
""")

# ---------------------------------------------------------------- web
step("_wu", """
CREATE TEMP TABLE _wu AS
WITH l AS (
  SELECT customer_id, customer_id AS src_key, signup_at + to_seconds(CAST(ri(u(customer_id, 501), 20 * 86400) AS BIGINT)) AS created_at, is_test, FALSE AS is_internal,
    deleted_at, country_code FROM _cust WHERE u(customer_id, 500) < 0.7
), g AS (
  SELECT NULL::BIGINT AS customer_id, -k AS src_key, ts(DATE '2019-01-01' + CAST(ri(u(k, 502), 2525) AS INTEGER), ri(u(k, 503), 86400)) AS created_at,
    u(k, 504) < 0.01 AS is_test, u(k, 505) < 0.02 AS is_internal,
    CASE WHEN u(k, 506) < 0.01 THEN TIMESTAMP '2025-06-01' END AS deleted_at,
    pick(['US', 'US', 'US', 'CA', 'GB', 'DE', 'FR'], u(k, 507)) AS country_code
  FROM range(1, $N_GUEST + 1) t(k)
), a AS (SELECT * FROM l UNION ALL SELECT * FROM g)
SELECT row_number() OVER (ORDER BY created_at, src_key) AS web_user_id, a.* EXCLUDE (src_key) FROM a
WHERE created_at < TIMESTAMP '2025-11-30'
""")

step("web.users", """
INSERT INTO web.users BY NAME
SELECT web_user_id, customer_id, created_at, is_test, is_internal, deleted_at FROM _wu
""")

step("_wu_cum", """
CREATE TEMP TABLE _wu_cum AS
WITH s AS (SELECT CAST(created_at AS DATE) AS cd, max(web_user_id) AS n FROM _wu GROUP BY ALL)
SELECT d.date_day AS day, s.n FROM ops.dim_date d ASOF JOIN s ON d.date_day >= s.cd
WHERE d.date_day BETWEEN DATE '2024-01-01' AND DATE '2025-11-30'
""")

step("_sess", """
CREATE TEMP TABLE _sess AS
WITH b AS (
  SELECT s, u(s, 510) AS r1, u(s, 511) AS r2, u(s, 512) AS r3, u(s, 513) AS r4, u(s, 514) AS r5, u(s, 515) AS r6,
    u(s, 516) AS r7, u(s, 517) AS r8, u(s, 518) AS r9, u(s, 519) AS r10, u(s, 520) AS r11,
    DATE '2024-01-01' + CAST(ri(CASE WHEN u(s, 521) < 0.5 THEN greatest(u(s, 522), u(s, 523)) ELSE u(s, 524) END, 700) AS INTEGER) AS d
  FROM range(1, $N_SESS + 1) t(s)
), x AS (
  SELECT b.*, r1 < 0.04 AS is_bot,
    CASE WHEN r1 < 0.04 THEN CASE WHEN r2 < 0.3 THEN 1 + (ri(r3, 40) * 97) % c.n END
         WHEN r2 < 0.62 THEN 1 + ri(CASE WHEN r4 < 0.6 THEN r3 * r3 ELSE r3 END, c.n) END AS wu
  FROM b JOIN _wu_cum c ON c.day = b.d
)
SELECT row_number() OVER (ORDER BY d, r5, s) AS session_id, x.*, ts(d, ri(r5, 86400)) AS started_at FROM x
""")

step("web.sessions", """
INSERT INTO web.sessions BY NAME
SELECT session_id, wu AS web_user_id, started_at, CAST(CASE WHEN is_bot THEN 2 + ri(r6, 20) ELSE 10 + ri(r6 * r6, 1800) END AS INTEGER) AS duration_seconds,
  CASE WHEN NOT is_bot AND d >= DATE '2023-03-01' AND r7 < 0.3 THEN 'app' ELSE 'web' END AS platform,
  CASE WHEN is_bot THEN 'desktop' WHEN r8 < 0.55 THEN 'mobile' WHEN r8 < 0.92 THEN 'desktop' ELSE 'tablet' END AS device_type,
  coalesce(w.country_code, pick(['US', 'US', 'US', 'US', 'CA', 'GB', 'DE', 'FR'], r9)) AS country_code,
  CASE WHEN r10 < 0.45 THEN pick(['google', 'bing', 'facebook', 'instagram', 'tiktok', 'newsletter', 'crm', 'awin', 'criteo', 'creator', 'sms'], r11) END AS utm_source,
  is_bot
FROM _sess LEFT JOIN _wu w ON w.web_user_id = _sess.wu
""")

step("web.sessions_bak", """
INSERT INTO web.sessions_bak BY NAME
SELECT session_id, web_user_id, started_at, duration_seconds, platform, device_type, country_code FROM web.sessions
WHERE started_at < TIMESTAMP '2025-03-01'
""")

step("web.events", """
INSERT INTO web.events BY NAME
WITH e AS (
  SELECT s.session_id, s.web_user_id, s.started_at, s.duration_seconds, k, n, u(s.session_id * 8 + k, 530) AS rt, u(s.session_id * 8 + k, 531) AS rp
  FROM (SELECT *, 1 + ri(u(session_id, 532), 5) AS n FROM web.sessions) s, range(1, 6) t(k) WHERE k <= n
), t AS (
  SELECT e.*, CASE WHEN k = 1 THEN 'page_view' WHEN rt < 0.40 THEN 'product_view' WHEN rt < 0.55 THEN 'search'
     WHEN rt < 0.75 THEN 'add_to_cart' WHEN rt < 0.90 THEN 'page_view' WHEN rt < 0.96 THEN 'checkout' ELSE 'purchase' END AS event_type,
    started_at + to_seconds(CAST(floor(duration_seconds * (k - 1) / n) AS BIGINT)) AS event_ts,
    md5('evt:' || session_id || ':' || k) AS h
  FROM e
), d AS (
  SELECT t.*, 0 AS dup FROM t UNION ALL SELECT t.*, 1 FROM t WHERE u(session_id * 8 + k, 533) < 0.03
)
SELECT session_id * 16 + k * 2 + dup AS event_id,
  substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-' || substr(h, 17, 4) || '-' || substr(h, 21, 12) AS event_uuid,
  session_id, web_user_id, event_type, event_ts,
  CASE WHEN event_type IN ('product_view', 'add_to_cart') THEN CAST(1 + ri(rp * rp, 1200) AS INTEGER) END AS product_id,
  event_ts + to_seconds(CAST(60 + dup * 300 + ri(rp, 240) AS BIGINT)) AS ingested_at
FROM d
""")

step("web.active_users_daily", """
INSERT INTO web.active_users_daily BY NAME
SELECT CAST(started_at AS DATE) AS activity_date, CAST(count(DISTINCT web_user_id) AS INTEGER) AS active_users,
       CAST(count(*) AS INTEGER) AS sessions
FROM web.sessions GROUP BY ALL
""")

step("legacy.kpi_active_users", """
INSERT INTO legacy.kpi_active_users
SELECT CAST(date_trunc('month', started_at) AS DATE), CAST(count(DISTINCT web_user_id) AS INTEGER) FROM web.sessions GROUP BY ALL
""")

step("legacy.web_visits", """
INSERT INTO legacy.web_visits
SELECT d, CAST(150 + ri(u(k, 540), 120) + k / 8 AS INTEGER), CAST(90 + ri(u(k, 541), 60) + k / 14 AS INTEGER)
FROM (SELECT CAST(DATE '2022-01-01' + CAST(k AS INTEGER) AS DATE) AS d, k FROM range(0, 730) t(k))
UNION ALL
SELECT CAST(started_at AS DATE), CAST(count(*) AS INTEGER), CAST(count(DISTINCT web_user_id) AS INTEGER) FROM web.sessions
WHERE started_at < TIMESTAMP '2024-07-01' GROUP BY ALL
""")

step("web.pages", """
INSERT INTO web.pages BY NAME
SELECT k AS page_id,
  CASE WHEN k = 1 THEN '/' WHEN k = 2 THEN '/cart' WHEN k = 3 THEN '/checkout' WHEN k <= 33 THEN '/c/' || lower(replace(c.category_name, ' ', '-'))
       WHEN k <= 50 THEN '/p/top-' || (k - 33) ELSE '/help/' || pick(['returns', 'shipping', 'contact', 'stores', 'faq', 'privacy', 'terms', 'careers', 'about', 'gift-cards'], u(k, 550)) || '-' || k END AS url_path,
  CASE WHEN k = 1 THEN 'home' WHEN k = 2 THEN 'cart' WHEN k = 3 THEN 'checkout' WHEN k <= 33 THEN 'category' WHEN k <= 50 THEN 'product' ELSE 'content' END AS page_type
FROM range(1, 61) t(k) LEFT JOIN sales.product_categories c ON c.category_id = k - 3
""")

step("web.page_views_daily", """
INSERT INTO web.page_views_daily BY NAME
SELECT CAST(DATE '2024-12-01' + CAST(d AS INTEGER) AS DATE) AS view_date, p AS page_id,
  CAST(ri(u(d * 64 + p, 560), 4000 / p) + 5 AS INTEGER) AS views, CAST(ri(u(d * 64 + p, 561), 2500 / p) + 3 AS INTEGER) AS unique_visitors
FROM range(0, 365) a(d), range(1, 61) b(p)
""")

step("web.search_queries", """
INSERT INTO web.search_queries BY NAME
SELECT session_id * 3 AS search_id, session_id,
  pick(['headphones', 'rain jacket', 'coffee maker', 'running shoes', 'sofa', 'laptop', 'gift for dad', 'yoga mat', 'lego', 'perfume',
        'winter coat', 'phone case', 'desk lamp', 'bike helmet', 'board game', 'tv 55 inch', 'kids jacket', 'dog bed', 'garden hose', 'swimsuit'], u(session_id, 570)) AS query_text,
  CAST(ri(u(session_id, 571), 240) AS INTEGER) AS results_count, started_at + INTERVAL 20 SECOND AS searched_at
FROM web.sessions WHERE u(session_id, 572) < 0.1 AND NOT is_bot
""")

step("web.experiments", """
INSERT INTO web.experiments VALUES
 (1, 'checkout_one_page', DATE '2024-02-01', DATE '2024-03-15', 'concluded'), (2, 'free_shipping_banner', DATE '2024-04-01', DATE '2024-05-01', 'concluded'),
 (3, 'reco_carousel_v2', DATE '2024-06-01', DATE '2024-07-15', 'concluded'), (4, 'search_ranking_ml', DATE '2024-09-01', DATE '2024-10-15', 'concluded'),
 (5, 'app_onboarding', DATE '2025-01-10', DATE '2025-02-20', 'concluded'), (6, 'pdp_video', DATE '2025-04-01', DATE '2025-05-15', 'concluded'),
 (7, 'bnpl_messaging', DATE '2025-08-01', NULL, 'running'), (8, 'holiday_gift_finder', DATE '2025-11-01', NULL, 'running')
""")

step("web.experiment_assignments", """
INSERT INTO web.experiment_assignments BY NAME
SELECT e.experiment_id, w.web_user_id, CASE WHEN u(w.web_user_id * 16 + e.experiment_id, 581) < 0.5 THEN 'control' ELSE 'treatment' END AS variant,
  ts(e.start_date, ri(u(w.web_user_id * 16 + e.experiment_id, 582), 86400 * 20)) AS assigned_at
FROM web.experiments e JOIN _wu w ON CAST(w.created_at AS DATE) < e.start_date AND u(w.web_user_id * 16 + e.experiment_id, 580) < 0.12
""")

step("web.referrers", """
INSERT INTO web.referrers VALUES
 (1, 'google.com', 'search'), (2, 'bing.com', 'search'), (3, 'duckduckgo.com', 'search'), (4, 'facebook.com', 'social'),
 (5, 'instagram.com', 'social'), (6, 'tiktok.com', 'social'), (7, 'pinterest.com', 'social'), (8, 'reddit.com', 'social'),
 (9, 'youtube.com', 'social'), (10, 'wirecutter.com', 'partner'), (11, 'slickdeals.net', 'partner'), (12, 'honey.com', 'partner'),
 (13, 'rakuten.com', 'partner'), (14, 'mydealz.de', 'partner'), (15, 'hotukdeals.com', 'partner'), (16, 'dealabs.com', 'partner'),
 (17, 'news.ycombinator.com', 'other'), (18, 'outlook.live.com', 'other'), (19, 'mail.google.com', 'other'), (20, 'linkedin.com', 'social')
""")

step("web.app_installs", """
INSERT INTO web.app_installs BY NAME
SELECT k AS install_id, CASE WHEN u(k, 590) < 0.7 THEN 1 + ri(u(k, 591), (SELECT max(web_user_id) FROM _wu)) END AS web_user_id,
  CASE WHEN u(k, 592) < 0.55 THEN 'ios' ELSE 'android' END AS os,
  ts(DATE '2023-03-01' + CAST(ri(u(k, 593), 1000) AS INTEGER), ri(u(k, 594), 86400)) AS installed_at,
  CASE WHEN u(k, 595) < 0.3 THEN ts(DATE '2023-03-01' + CAST(ri(u(k, 593), 1000) AS INTEGER) + CAST(1 + ri(u(k, 596), 300) AS INTEGER), 3600) END AS uninstalled_at
FROM range(1, $N_INSTALL + 1) t(k)
""")

step("web.user_consents", """
INSERT INTO web.user_consents BY NAME
SELECT web_user_id * 2 AS consent_id, web_user_id, 'analytics' AS consent_type, u(web_user_id, 600) < 0.8 AS granted, created_at AS recorded_at FROM _wu
UNION ALL SELECT web_user_id * 2 + 1, web_user_id, 'marketing', u(web_user_id, 601) < 0.5, created_at + INTERVAL 1 SECOND FROM _wu WHERE u(web_user_id, 602) < 0.6
""")

step("web.product_views_daily", """
INSERT INTO web.product_views_daily BY NAME
SELECT CAST(DATE '2025-10-01' + CAST(d AS INTEGER) AS DATE) AS view_date, p AS product_id, CAST(1 + ri(u(d * 2000 + p, 610), 3000 / (1 + p / 40)) AS INTEGER) AS views
FROM range(0, 61) a(d), range(1, 1201) b(p) WHERE u(d * 2000 + p, 611) < 0.5
""")

step("orders.carts", """
INSERT INTO orders.carts BY NAME
SELECT k + 7000000 AS cart_id, CASE WHEN u(k, 620) < 0.6 THEN 1 + ri(u(k, 621), (SELECT max(web_user_id) FROM _wu)) END AS web_user_id,
  ts(DATE '2024-01-01' + CAST(ri(u(k, 622), 700) AS INTEGER), ri(u(k, 623), 86400)) AS created_at
FROM range(1, $N_CART + 1) t(k)
""")

step("orders.cart_items", """
INSERT INTO orders.cart_items BY NAME
SELECT c.cart_id * 4 + k AS cart_item_id, c.cart_id, CAST(1 + ri(u(c.cart_id * 4 + k, 630) * u(c.cart_id * 4 + k, 631), 1200) AS INTEGER) AS product_id,
  CAST(1 + ri(u(c.cart_id * 4 + k, 632), 2) AS INTEGER) AS quantity
FROM orders.carts c, range(1, 4) t(k) WHERE k <= 1 + ri(u(c.cart_id, 633), 3)
""")

# ---------------------------------------------------------------- hr
step("hr.departments", """
INSERT INTO hr.departments VALUES
 (1, 'Store Operations', NULL, 201), (2, 'E-commerce', NULL, 202), (3, 'Marketing', NULL, 203), (4, 'Finance', NULL, 204),
 (5, 'Human Resources', NULL, 205), (6, 'IT', NULL, 206), (7, 'Supply Chain', NULL, 207), (8, 'Merchandising', NULL, 208),
 (9, 'Customer Service', NULL, 209), (10, 'Legal', NULL, 210), (11, 'Executive Office', NULL, 211), (12, 'Data & Analytics', 6, 212),
 (13, 'Loss Prevention', 1, 213), (14, 'Facilities', 7, 214), (15, 'Procurement', 7, 215), (16, 'Design', 8, 216)
""")

step("hr.positions", """
INSERT INTO hr.positions BY NAME
SELECT k AS position_id, t.title, t.family AS job_family, t.grade FROM (VALUES
 (1, 'Sales Associate', 'Retail', 1), (2, 'Senior Sales Associate', 'Retail', 2), (3, 'Cashier', 'Retail', 1), (4, 'Stock Associate', 'Retail', 1),
 (5, 'Assistant Store Manager', 'Retail', 4), (6, 'Store Manager', 'Retail', 5), (7, 'Visual Merchandiser', 'Retail', 2), (8, 'District Manager', 'Retail', 6),
 (9, 'Customer Service Agent', 'Service', 1), (10, 'Customer Service Lead', 'Service', 3), (11, 'Accountant', 'Finance', 3), (12, 'Senior Accountant', 'Finance', 4),
 (13, 'Financial Analyst', 'Finance', 4), (14, 'Finance Manager', 'Finance', 6), (15, 'Software Engineer', 'Technology', 4), (16, 'Senior Software Engineer', 'Technology', 5),
 (17, 'Engineering Manager', 'Technology', 6), (18, 'Data Analyst', 'Technology', 4), (19, 'Data Engineer', 'Technology', 5), (20, 'IT Support Specialist', 'Technology', 2),
 (21, 'Marketing Specialist', 'Marketing', 3), (22, 'Marketing Manager', 'Marketing', 5), (23, 'Content Designer', 'Marketing', 3), (24, 'Buyer', 'Merchandising', 4),
 (25, 'Senior Buyer', 'Merchandising', 5), (26, 'Planner', 'Merchandising', 4), (27, 'Warehouse Associate', 'Supply Chain', 1), (28, 'Logistics Coordinator', 'Supply Chain', 3),
 (29, 'Supply Chain Manager', 'Supply Chain', 6), (30, 'HR Generalist', 'People', 3), (31, 'Recruiter', 'People', 3), (32, 'HR Business Partner', 'People', 5),
 (33, 'Counsel', 'Legal', 6), (34, 'Paralegal', 'Legal', 3), (35, 'Director', 'Leadership', 7), (36, 'Vice President', 'Leadership', 8),
 (37, 'Chief Executive Officer', 'Leadership', 9), (38, 'Loss Prevention Officer', 'Retail', 2), (39, 'Facilities Technician', 'Operations', 2), (40, 'Product Designer', 'Design', 4)
) t(k, title, family, grade)
""")

step("_emp", """
CREATE TEMP TABLE _emp AS
WITH b AS (
  SELECT e AS employee_id, u(e, 700) AS rd, u(e, 701) AS rp, u(e, 702) AS rh, u(e, 703) AS rterm, u(e, 704) AS rt2, u(e, 705) AS rtype,
    u(e, 706) AS rs, u(e, 707) AS rc, u(e, 708) AS rv, u(e, 709) AS rx
  FROM range(1, 1401) t(e)
), d AS (
  SELECT b.*,
    CASE WHEN employee_id <= 900 THEN 1 ELSE [2, 2, 3, 4, 5, 6, 6, 7, 7, 8, 9, 9, 9, 10, 11, 12, 13, 14, 15, 16][1 + ri(rd, 20)] END AS dept,
    DATE '2012-01-01' + CAST(ri(CASE WHEN rh < 0.5 THEN greatest(rh * 2, u(employee_id, 710)) ELSE u(employee_id, 711) END, 5080) AS INTEGER) AS hire_date,
    CASE WHEN employee_id <= 900 THEN 1 + ri(rs, 48) END AS store_id
  FROM b
), t AS (
  SELECT d.*, CASE WHEN rterm < 0.28 AND hire_date < DATE '2025-08-01' THEN hire_date + 90 + CAST(ri(rt2, greatest(DATE '2025-11-29' - hire_date - 90, 1)) AS INTEGER) END AS term_date,
    CASE WHEN rtype < 0.68 THEN 'full_time' WHEN rtype < 0.9 THEN 'part_time' ELSE 'contractor' END AS employment_type
  FROM d WHERE hire_date <= DATE '2025-11-25'
)
SELECT t.*,
  CASE WHEN dept = 1 THEN (CASE WHEN store_id <= 30 THEN 'US' WHEN store_id <= 36 THEN 'CA' WHEN store_id <= 42 THEN 'GB' WHEN store_id <= 46 THEN 'DE' ELSE 'FR' END)
       WHEN rc < 0.8 THEN 'US' WHEN rc < 0.9 THEN 'GB' ELSE 'DE' END AS country_code,
  CASE WHEN dept = 1 THEN pick([1, 1, 1, 2, 3, 3, 4, 4, 5, 7, 38], rp)
       ELSE CASE dept WHEN 2 THEN pick([15, 16, 17, 21], rp) WHEN 3 THEN pick([21, 22, 23], rp) WHEN 4 THEN pick([11, 12, 13, 14], rp)
            WHEN 5 THEN pick([30, 31, 32], rp) WHEN 6 THEN pick([15, 16, 17, 20], rp) WHEN 7 THEN pick([27, 27, 28, 29], rp)
            WHEN 8 THEN pick([24, 25, 26], rp) WHEN 9 THEN pick([9, 9, 9, 10], rp) WHEN 10 THEN pick([33, 34], rp) WHEN 11 THEN pick([35, 36, 37], rp)
            WHEN 12 THEN pick([18, 19], rp) WHEN 13 THEN pick([38], rp) WHEN 14 THEN pick([39], rp) WHEN 15 THEN pick([24, 28], rp) ELSE pick([40, 23], rp) END END AS position_id
FROM t
""")

step("_emph", """
CREATE TEMP TABLE _emph AS
WITH e AS (
  SELECT _emp.*, p.grade, CASE country_code WHEN 'US' THEN 'USD' WHEN 'CA' THEN 'CAD' WHEN 'GB' THEN 'GBP' ELSE 'EUR' END AS currency_code,
    CASE country_code WHEN 'US' THEN 1.0 WHEN 'CA' THEN 1.35 WHEN 'GB' THEN 0.79 ELSE 0.92 END AS f,
    CASE WHEN rv < 0.3 OR DATE '2025-11-30' - hire_date < 400 THEN 1 WHEN rv < 0.7 THEN 2 ELSE 3 END AS nv,
    least(coalesce(term_date, DATE '2025-11-30'), DATE '2025-11-30') AS last_day
  FROM _emp JOIN hr.positions p USING (position_id)
), v AS (
  SELECT e.*, hire_date + CAST(1 + ri(u(employee_id, 720), greatest(last_day - hire_date - 2, 1)) AS INTEGER) AS d1 FROM e
), w AS (
  SELECT v.*, d1 + CAST(1 + ri(u(employee_id, 721), greatest(last_day - d1 - 1, 1)) AS INTEGER) AS d2 FROM v
), r AS (
  SELECT employee_id, 1 AS k, nv, hire_date AS vf, CASE WHEN nv = 1 OR d1 >= last_day THEN DATE '9999-12-31' ELSE d1 END AS vt,
    CASE WHEN nv >= 2 AND dept <> 1 AND rx < 0.2 THEN CASE WHEN dept = 2 THEN 12 ELSE 2 END ELSE dept END AS dept_k, position_id, grade, 1.0 AS m, currency_code, f, employment_type FROM w
  UNION ALL SELECT employee_id, 2, nv, d1, CASE WHEN nv = 2 OR d2 >= last_day THEN DATE '9999-12-31' ELSE d2 END, dept, position_id, grade, 1.04 + floor(u(employee_id, 722) * 6) / 100, currency_code, f, employment_type FROM w WHERE nv >= 2 AND d1 < last_day
  UNION ALL SELECT employee_id, 3, nv, d2, DATE '9999-12-31', dept, position_id, grade, (1.04 + floor(u(employee_id, 722) * 6) / 100) * (1.03 + floor(u(employee_id, 723) * 5) / 100), currency_code, f, employment_type FROM w WHERE nv = 3 AND d1 < last_day AND d2 < last_day
)
SELECT employee_id * 4 + k AS employee_history_id, employee_id, dept_k AS department_id, position_id, currency_code,
  CAST(xround((24000 + grade * 11500 + ri(u(employee_id, 724), 60) * 100) * f * m * CASE employment_type WHEN 'part_time' THEN 0.5 ELSE 1 END, -2) AS DECIMAL(12,2)) AS salary_annual,
  vf AS valid_from, vt AS valid_to, vt = DATE '9999-12-31' AS is_current, employment_type
FROM r
""")

step("hr.employee_history", """
INSERT INTO hr.employee_history BY NAME SELECT * EXCLUDE (employment_type) FROM _emph
""")

step("hr.employees", """
INSERT INTO hr.employees BY NAME
SELECT e.employee_id, 'E' || lpad(CAST(e.employee_id AS VARCHAR), 6, '0') AS employee_code,
  pick($FN, u(e.employee_id, 730)) AS first_name, pick($LN, u(e.employee_id, 731)) AS last_name,
  lower(pick($FN, u(e.employee_id, 730)) || '.' || pick($LN, u(e.employee_id, 731))) || e.employee_id || '@vantageretail.com' AS email,
  h.department_id, e.position_id, e.store_id,
  CASE WHEN e.employee_id > 20 THEN CAST(1 + ri(u(e.employee_id, 732), 20) AS INTEGER) END AS manager_id,
  e.country_code, e.employment_type, e.hire_date, e.term_date AS termination_date,
  e.term_date IS NULL OR e.term_date > DATE '2024-06-30' AS is_active
FROM _emp e JOIN _emph h ON h.employee_id = e.employee_id AND h.is_current
""")

step("hr.terminations", """
INSERT INTO hr.terminations BY NAME
SELECT row_number() OVER (ORDER BY employee_id) AS termination_id, employee_id, term_date AS termination_date,
  pick(['Resignation', 'Resignation', 'Resignation', 'Relocation', 'Performance', 'Restructuring', 'Contract end', 'Retirement'], u(employee_id, 740)) AS reason,
  u(employee_id, 741) < 0.7 AS is_voluntary
FROM _emp WHERE term_date IS NOT NULL
""")

step("hr.payroll", """
INSERT INTO hr.payroll BY NAME
WITH m AS (SELECT CAST(DATE '2022-01-01' + to_months(CAST(k AS INTEGER)) AS DATE) AS pay_month FROM range(0, 47) t(k))
SELECT h.employee_id * 100 + (year(m.pay_month) - 2022) * 12 + month(m.pay_month) AS payroll_id, h.employee_id, m.pay_month,
  CAST(xround(h.salary_annual / 12, 2) AS DECIMAL(12,2)) AS gross_pay,
  CAST(xround(h.salary_annual / 12 * CASE h.currency_code WHEN 'USD' THEN 0.0765 WHEN 'EUR' THEN 0.21 WHEN 'GBP' THEN 0.138 ELSE 0.11 END, 2) AS DECIMAL(12,2)) AS employer_taxes,
  h.currency_code
FROM _emph h JOIN m ON h.valid_from <= last_day(m.pay_month) AND h.valid_to > last_day(m.pay_month)
JOIN _emp e USING (employee_id)
WHERE h.employment_type <> 'contractor' AND (e.term_date IS NULL OR m.pay_month <= e.term_date)
""")

step("hr.time_off", """
INSERT INTO hr.time_off BY NAME
SELECT k AS time_off_id, e.employee_id, pick(['vacation', 'vacation', 'vacation', 'sick', 'sick', 'parental', 'unpaid'], u(k, 750)) AS leave_type,
  e.hire_date + CAST(ri(u(k, 751), greatest(least(coalesce(e.term_date, DATE '2025-11-30'), DATE '2025-11-30') - e.hire_date, 1)) AS INTEGER) AS start_date,
  CAST(1 + ri(u(k, 752), 10) + CASE WHEN u(k, 753) < 0.5 THEN 0.5 ELSE 0 END AS DECIMAL(5,1)) AS days
FROM range(1, 7001) t(k) JOIN _emp e ON e.employee_id = 1 + ri(u(k, 754), 1400)
""")

step("hr.performance_reviews", """
INSERT INTO hr.performance_reviews BY NAME
SELECT e.employee_id * 10 + (y - 2020) AS review_id, e.employee_id, CAST(y AS INTEGER) AS review_year,
  CAST(pick([1, 2, 3, 3, 3, 4, 4, 5], u(e.employee_id * 10 + y, 760)) AS INTEGER) AS rating, coalesce(e.manager_id, 1) AS reviewer_id
FROM hr.employees e, range(2021, 2025) t(y)
WHERE e.hire_date <= make_date(CAST(y AS INTEGER), 10, 1) AND (e.termination_date IS NULL OR e.termination_date >= make_date(CAST(y AS INTEGER), 12, 31))
  AND e.employment_type <> 'contractor'
""")

step("hr.headcount_monthly", """
INSERT INTO hr.headcount_monthly BY NAME
WITH m AS (SELECT CAST(DATE '2022-01-01' + to_months(CAST(k AS INTEGER)) AS DATE) AS month_start FROM range(0, 47) t(k))
SELECT m.month_start, h.department_id, CAST(count(DISTINCT h.employee_id) AS INTEGER) AS headcount
FROM m JOIN _emph h ON h.valid_from <= last_day(m.month_start) AND h.valid_to > last_day(m.month_start)
JOIN _emp e USING (employee_id)
WHERE e.term_date IS NULL OR e.term_date >= m.month_start
GROUP BY ALL
""")

step("hr.store_assignments", """
INSERT INTO hr.store_assignments BY NAME
SELECT employee_id * 2 AS assignment_id, employee_id, CAST(store_id AS INTEGER) AS store_id, hire_date AS start_date, term_date AS end_date
FROM _emp WHERE store_id IS NOT NULL
""")

step("hr.training_completions", """
INSERT INTO hr.training_completions BY NAME
SELECT k AS completion_id, e.employee_id, pick(['SAFETY-101', 'POS-BASICS', 'GDPR-2023', 'ANTI-HARASSMENT', 'LEADERSHIP-1', 'FRAUD-AWARE', 'CUSTOMER-FIRST'], u(k, 770)) AS course_code,
  e.hire_date + CAST(ri(u(k, 771), greatest(least(coalesce(e.term_date, DATE '2025-11-30'), DATE '2025-11-30') - e.hire_date, 1)) AS INTEGER) AS completed_date,
  CASE WHEN u(k, 772) < 0.8 THEN CAST(60 + ri(u(k, 773), 41) AS INTEGER) END AS score
FROM range(1, 5001) t(k) JOIN _emp e ON e.employee_id = 1 + ri(u(k, 774), 1400)
""")

step("hr.employees_old", """
INSERT INTO hr.employees_old BY NAME
SELECT e.employee_id, e.first_name || ' ' || e.last_name AS full_name, d.department_name, p.title, e.country_code, e.employment_type, e.hire_date,
  CASE WHEN e.termination_date IS NOT NULL AND e.termination_date <= DATE '2024-06-30' THEN 'terminated' ELSE 'active' END AS status
FROM hr.employees e JOIN _emph h ON h.employee_id = e.employee_id AND DATE '2024-06-30' >= h.valid_from AND DATE '2024-06-30' < h.valid_to
JOIN hr.departments d ON d.department_id = h.department_id JOIN hr.positions p ON p.position_id = h.position_id
WHERE e.hire_date <= DATE '2024-06-30'
""")

step("legacy.employees", """
INSERT INTO legacy.employees
SELECT e.employee_id, upper(e.last_name) || ', ' || e.first_name, upper(d.department_name),
  CASE WHEN e.termination_date IS NOT NULL AND e.termination_date <= DATE '2021-12-31' THEN 'N' ELSE 'Y' END
FROM hr.employees e JOIN hr.departments d USING (department_id) WHERE e.hire_date <= DATE '2021-12-31'
""")

step("sales.sales_reps", """
INSERT INTO sales.sales_reps BY NAME
SELECT row_number() OVER (ORDER BY employee_id) AS sales_rep_id, employee_id, CAST(1 + (employee_id % 9) AS INTEGER) AS region_id,
  CAST(xround(400000 + u(employee_id, 780) * 1200000, -3) AS DECIMAL(14,2)) AS quota_usd
FROM hr.employees WHERE department_id = 2 AND employee_id % 3 = 0
""")

# ---------------------------------------------------------------- ops
step("ops.suppliers", """
INSERT INTO ops.suppliers BY NAME
SELECT k AS supplier_id, pick(['Acme', 'Globex', 'Initech', 'Umbrella', 'Stark', 'Wayne', 'Wonka', 'Hooli', 'Vandelay', 'Soylent', 'Tyrell', 'Cyberdyne'], u(k, 800))
    || ' ' || pick(['Trading', 'Manufacturing', 'Textiles', 'Electronics', 'Home Goods', 'Imports'], u(k, 801)) || ' ' || k AS supplier_name,
  pick(['CN', 'CN', 'VN', 'US', 'DE', 'IN', 'BD', 'TR', 'MX', 'IT'], u(k, 802)) AS country_code, CAST(7 + ri(u(k, 803), 60) AS INTEGER) AS lead_time_days
FROM range(1, 61) t(k)
""")

step("finance.vendors", """
INSERT INTO finance.vendors BY NAME
SELECT supplier_id + 5000 AS vendor_id, upper(supplier_name) AS vendor_name, country_code, CAST(pick([30, 45, 60], u(supplier_id, 810)) AS INTEGER) AS payment_terms_days, supplier_id
FROM ops.suppliers
UNION ALL SELECT 5100 + k, v.n, v.c, 30, NULL FROM (VALUES (1, 'Google Ireland Ltd', 'IE'), (2, 'Meta Platforms Ireland', 'IE'), (3, 'Amazon Web Services', 'US'),
  (4, 'Salesforce Inc', 'US'), (5, 'Cushman & Wakefield', 'US'), (6, 'Deloitte LLP', 'GB'), (7, 'UPS Supply Chain', 'US'), (8, 'DHL Express', 'DE'),
  (9, 'Workday Inc', 'US'), (10, 'Comcast Business', 'US')) v(k, n, c)
""")

step("ops.purchase_orders", """
INSERT INTO ops.purchase_orders BY NAME
WITH b AS (
  SELECT k + 300000 AS po_id, CAST(1 + ri(u(k, 820), 60) AS INTEGER) AS supplier_id, CAST(1 + ri(u(k, 821), 8) AS INTEGER) AS warehouse_id,
    DATE '2022-01-01' + CAST(ri(u(k, 822), 1425) AS INTEGER) AS ordered_date, u(k, 823) AS rd, u(k, 824) AS rc
  FROM range(1, $N_PO + 1) t(k)
), e AS (
  SELECT b.*, ordered_date + s.lead_time_days AS expected_date,
    ordered_date + s.lead_time_days + CAST(floor(rd * rd * 25) AS INTEGER) - 3 AS arrival
  FROM b JOIN ops.suppliers s USING (supplier_id)
)
SELECT po_id, supplier_id, warehouse_id, ordered_date, expected_date,
  CASE WHEN rc >= 0.03 AND arrival <= DATE '2025-11-30' THEN arrival END AS received_date,
  CASE WHEN rc < 0.03 THEN 'cancelled' WHEN arrival <= DATE '2025-11-30' THEN 'received' ELSE 'open' END AS status
FROM e
""")

step("ops.purchase_order_lines", """
INSERT INTO ops.purchase_order_lines BY NAME
WITH l AS (
  SELECT po.po_id, po.ordered_date, k, CAST(1 + ri(u(po.po_id * 4 + k, 830), 1200) AS INTEGER) AS product_id
  FROM ops.purchase_orders po, range(1, 4) t(k) WHERE k <= 1 + ri(u(po.po_id, 833), 3)
)
SELECT l.po_id * 4 + k AS po_line_id, l.po_id, l.product_id,
  CAST(50 + ri(u(l.po_id * 4 + k, 831), 20) * 25 AS INTEGER) AS quantity,
  CAST(xround(pc.unit_cost_usd * (0.95 + 0.1 * u(l.po_id * 4 + k, 832)), 2) AS DECIMAL(10,2)) AS unit_cost_usd
FROM l JOIN ops.product_costs pc ON pc.product_id = l.product_id AND l.ordered_date < pc.valid_to
QUALIFY row_number() OVER (PARTITION BY l.po_id, l.k ORDER BY pc.valid_from) = 1
""")

step("ops.stock_movements", """
INSERT INTO ops.stock_movements BY NAME
SELECT k + 900000 AS movement_id, CAST(1 + ri(u(k, 840), 8) AS INTEGER) AS warehouse_id, CAST(1 + ri(u(k, 841) * u(k, 842), 1200) AS INTEGER) AS product_id,
  pick(['receipt', 'pick', 'pick', 'pick', 'adjustment', 'transfer'], u(k, 843)) AS movement_type,
  CAST(CASE WHEN u(k, 843) < 1.0 / 6 THEN 25 + ri(u(k, 844), 200) WHEN u(k, 843) < 4.0 / 6 THEN -(1 + ri(u(k, 844), 4)) ELSE ri(u(k, 844), 21) - 10 END AS INTEGER) AS quantity,
  ts(DATE '2024-01-01' + CAST(ri(u(k, 845), 700) AS INTEGER), ri(u(k, 846), 86400)) AS moved_at
FROM range(1, $N_MOVE + 1) t(k)
""")

step("_inv_snap", """
CREATE TEMP TABLE _inv_snap AS
WITH m AS (SELECT CAST(last_day(DATE '2023-01-01' + to_months(CAST(k AS INTEGER))) AS DATE) AS snapshot_date FROM range(0, 35) t(k))
SELECT m.snapshot_date, w.warehouse_id, p.product_id,
  CAST(ri(u(p.product_id * 4000 + w.warehouse_id * 100 + (year(m.snapshot_date) - 2023) * 12 + month(m.snapshot_date), 850), 300) AS INTEGER) AS on_hand_units,
  CAST(ri(u(p.product_id * 4000 + w.warehouse_id * 100 + (year(m.snapshot_date) - 2023) * 12 + month(m.snapshot_date), 851), 20) AS INTEGER) AS reserved_units
FROM m, ops.warehouses w, _prod p
WHERE u(p.product_id * 16 + w.warehouse_id, 852) < $STOCK_SHARE AND p.launched_date <= m.snapshot_date
  AND (p.discontinued_date IS NULL OR p.discontinued_date >= m.snapshot_date)
""")

step("ops.inventory_snapshots", """
INSERT INTO ops.inventory_snapshots BY NAME SELECT * FROM _inv_snap WHERE snapshot_date >= DATE '2024-01-31'
""")

step("ops.inventory_snapshots_old", """
INSERT INTO ops.inventory_snapshots_old BY NAME
SELECT s.snapshot_date, s.warehouse_id, s.product_id, s.on_hand_units,
  CAST(s.on_hand_units * pc.unit_cost_usd AS DECIMAL(14,2)) AS on_hand_value_usd
FROM _inv_snap s JOIN ops.product_costs pc ON pc.product_id = s.product_id AND s.snapshot_date >= pc.valid_from AND s.snapshot_date < pc.valid_to
WHERE s.snapshot_date <= DATE '2024-06-30'
""")

step("ops.store_hours", """
INSERT INTO ops.store_hours BY NAME
SELECT s.store_id, CAST(d AS INTEGER) AS day_of_week,
  CASE WHEN d = 7 THEN TIME '11:00' ELSE TIME '09:00' END AS opens_at, CASE WHEN d = 7 THEN TIME '18:00' WHEN d = 6 THEN TIME '22:00' ELSE TIME '21:00' END AS closes_at
FROM sales.stores s, range(1, 8) t(d) WHERE s.store_type = 'physical'
""")

step("ops.etl_runs", """
INSERT INTO ops.etl_runs BY NAME
WITH j AS (SELECT * FROM (VALUES (1, 'load_orders', 'orders.orders', 2), (2, 'load_order_lines', 'orders.order_lines', 2),
  (3, 'load_revenue', 'finance.revenue_recognized', 3), (4, 'legacy_revenue_v1', 'finance.revenue_recognized_v1', 4),
  (5, 'load_sessions', 'web.sessions', 1), (6, 'load_events', 'web.events', 1), (7, 'kpi_active_users_legacy', 'legacy.kpi_active_users', 5),
  (8, 'load_returns', 'returns.returns', 3), (9, 'load_fx', 'finance.fx_rates', 6), (10, 'load_campaign_spend', 'marketing.campaign_spend', 4),
  (11, 'daily_sales_summary', 'sales.daily_sales_summary', 5), (12, 'load_rev_billed', 'sales.rev_billed', 4)) v(job_id, job_name, target_table, hr)),
d AS (SELECT CAST(DATE '2025-09-01' + CAST(k AS INTEGER) AS DATE) AS run_date FROM range(0, 91) t(k))
SELECT j.job_id * 1000 + (d.run_date - DATE '2025-09-01') AS run_id, j.job_name, j.target_table,
  ts(d.run_date, j.hr * 3600) AS started_at, ts(d.run_date, j.hr * 3600 + 60 + ri(u(j.job_id * 1000 + (d.run_date - DATE '2025-09-01'), 860), 1500)) AS finished_at,
  CAST(ri(u(j.job_id * 1000 + (d.run_date - DATE '2025-09-01'), 861), 50000) AS BIGINT) AS rows_loaded,
  CASE WHEN u(j.job_id * 1000 + (d.run_date - DATE '2025-09-01'), 862) < 0.02 THEN 'failed' ELSE 'success' END AS status
FROM j, d
""")

step("ops.data_quality_issues", """
INSERT INTO ops.data_quality_issues VALUES
 (1, 'web.events', 'Duplicate events after collector retries', DATE '2023-02-14', NULL),
 (2, 'orders.orders', 'Duplicate orders entered by POS sync; removed via deleted_at', DATE '2022-08-03', DATE '2022-09-01'),
 (3, 'finance.fx_rates', 'Weekend dates missing', DATE '2021-05-10', NULL),
 (4, 'hr.employees', 'is_active not maintained after HRIS migration', DATE '2024-09-02', NULL),
 (5, 'marketing.campaign_spend', 'Spend units changed by connector upgrade', DATE '2024-07-15', DATE '2024-07-20'),
 (6, 'sales.daily_sales_summary', 'Does not reconcile with finance revenue', DATE '2023-03-01', NULL),
 (7, 'web.sessions', 'Bot traffic inflates sessions', DATE '2024-11-05', DATE '2025-03-01'),
 (8, 'sales.customers', 'QA accounts created in production', DATE '2022-04-12', NULL),
 (9, 'finance.revenue_recognized', 'Duplicate postings reversed by finance', DATE '2024-10-01', DATE '2024-10-08'),
 (10, 'marketing.email_events', 'Webhook retries duplicate opens', DATE '2023-06-21', NULL)
""")

# ---------------------------------------------------------------- finance (ledger)
step("finance.gl_accounts", """
INSERT INTO finance.gl_accounts VALUES
 (1000, 'Cash', 'asset', TRUE), (1100, 'Accounts receivable', 'asset', TRUE), (1200, 'Inventory', 'asset', TRUE),
 (2000, 'Accounts payable', 'liability', TRUE), (2100, 'Sales tax payable', 'liability', TRUE), (2200, 'Gift card liability', 'liability', TRUE),
 (3000, 'Retained earnings', 'equity', TRUE), (4000, 'Product revenue', 'revenue', TRUE), (4010, 'Shipping revenue', 'revenue', TRUE),
 (4090, 'Revenue adjustments', 'revenue', TRUE), (4100, 'Sales returns', 'revenue', TRUE), (4500, 'Legacy revenue clearing', 'revenue', FALSE),
 (5000, 'Cost of goods sold', 'expense', TRUE), (6000, 'Salaries', 'expense', TRUE), (6100, 'Rent', 'expense', TRUE),
 (6200, 'Marketing', 'expense', TRUE), (6300, 'Technology', 'expense', TRUE), (6400, 'Freight', 'expense', TRUE),
 (6500, 'Professional fees', 'expense', TRUE), (6900, 'Other operating expense', 'expense', TRUE)
""")

step("finance.cost_centers", """
INSERT INTO finance.cost_centers BY NAME
SELECT store_id AS cost_center_id, 'CC ' || store_name AS cost_center_name, store_id, NULL::INTEGER AS department_id, country_code FROM sales.stores
UNION ALL SELECT 200 + department_id, 'CC HQ ' || department_name, NULL, department_id, 'US' FROM hr.departments
""")

step("finance.revenue_adjustments", """
INSERT INTO finance.revenue_adjustments BY NAME
SELECT fp.fiscal_period_id * 10 + k AS adjustment_id, fp.fiscal_period_id, CAST(pick([1, 9, 17, 27, 37, 101, 103], u(fp.fiscal_period_id * 10 + k, 870)) AS INTEGER) AS cost_center_id,
  CAST(xround((u(fp.fiscal_period_id * 10 + k, 871) - 0.4) * 40000, 2) AS DECIMAL(14,2)) AS amount_usd,
  pick(['Gift card breakage', 'Loyalty points accrual', 'Marketplace fee true-up', 'Price adjustment', 'Prior period correction'], u(fp.fiscal_period_id * 10 + k, 872)) AS reason,
  CASE WHEN fp.is_closed THEN 'posted' ELSE 'pending' END AS status
FROM finance.fiscal_periods fp, range(1, 4) t(k)
WHERE fp.start_date BETWEEN DATE '2022-02-01' AND DATE '2025-11-30'
""")

step("finance.gl_entries", """
INSERT INTO finance.gl_entries BY NAME
WITH rev AS (
  SELECT dd.fiscal_year * 100 + dd.fiscal_period AS fiscal_period_id, r.cost_center_id, sum(r.amount_usd) AS amt
  FROM finance.revenue_recognized r JOIN ops.dim_date dd ON dd.date_day = r.recognized_date
  WHERE r.posting_status = 'posted' GROUP BY ALL
), e AS (
  SELECT fiscal_period_id, 4000 AS acct, cost_center_id, -amt AS amount, 0 AS tie FROM rev
  UNION ALL SELECT fiscal_period_id, 5000, cost_center_id, CAST(xround(amt * 0.46, 2) AS DECIMAL(16,2)), 0 FROM rev
  UNION ALL SELECT fiscal_period_id, 4090, cost_center_id, -amount_usd, adjustment_id FROM finance.revenue_adjustments WHERE status = 'posted'
  UNION ALL SELECT fp.fiscal_period_id, 6100, s.store_id, CAST(xround(s.square_meters * 38.5, 2) AS DECIMAL(16,2)), 0
    FROM finance.fiscal_periods fp, sales.stores s WHERE s.store_type = 'physical' AND fp.start_date BETWEEN DATE '2022-02-01' AND DATE '2025-11-30'
)
-- tie: two adjustments of one period can land on one cost centre; without it their ids depend on DuckDB's threads
SELECT row_number() OVER (ORDER BY fiscal_period_id, acct, cost_center_id, tie) AS entry_id, fiscal_period_id, acct AS gl_account_id, cost_center_id,
  CAST(amount AS DECIMAL(16,2)) AS amount_usd, ts(fp.end_date + 3, 64800) AS posted_at
FROM e JOIN finance.fiscal_periods fp USING (fiscal_period_id)
""")

step("legacy.gl_balances", """
INSERT INTO legacy.gl_balances
SELECT strftime(fp.start_date, '%Y-%m'), g.gl_account_id, sum(g.amount_usd)
FROM finance.gl_entries g JOIN finance.fiscal_periods fp USING (fiscal_period_id) WHERE fp.end_date <= DATE '2024-06-30' GROUP BY ALL
""")

step("finance.budgets", """
INSERT INTO finance.budgets BY NAME
WITH a AS (
  SELECT fp.fiscal_period_id, s.store_id AS cost_center_id, coalesce(-sum(g.amount_usd), 0) AS actual
  FROM finance.fiscal_periods fp CROSS JOIN sales.stores s
  LEFT JOIN finance.gl_entries g ON g.fiscal_period_id = fp.fiscal_period_id AND g.cost_center_id = s.store_id AND g.gl_account_id = 4000
  WHERE fp.fiscal_year IN (2024, 2025) GROUP BY ALL
), v AS (
  SELECT a.*, 'original' AS version, 1 AS k FROM a UNION ALL SELECT a.*, 'reforecast', 2 FROM a WHERE fiscal_period_id >= 202501
)
SELECT CAST(row_number() OVER (ORDER BY fiscal_period_id, cost_center_id, k) AS INTEGER) AS budget_id, fiscal_period_id, cost_center_id,
  CAST(xround(greatest(actual, 20000) * (0.9 + 0.2 * u(fiscal_period_id * 1000 + cost_center_id * 3 + k, 880)), -2) AS DECIMAL(14,2)) AS revenue_budget_usd,
  CAST(xround(greatest(actual, 20000) * (0.3 + 0.1 * u(fiscal_period_id * 1000 + cost_center_id * 3 + k, 881)), -2) AS DECIMAL(14,2)) AS opex_budget_usd, version
FROM v
""")

step("finance.ap_invoices", """
INSERT INTO finance.ap_invoices BY NAME
WITH b AS (
  SELECT k + 800000 AS ap_invoice_id, v.vendor_id, v.country_code, v.payment_terms_days,
    DATE '2022-01-01' + CAST(ri(u(k, 890), 1425) AS INTEGER) AS invoice_date, u(k, 891) AS ra, u(k, 892) AS rs
  FROM range(1, $N_AP + 1) t(k) JOIN finance.vendors v
    ON v.vendor_id = CASE WHEN ri(u(k, 893), 70) < 60 THEN 5001 + ri(u(k, 893), 70) ELSE 5041 + ri(u(k, 893), 70) END
)
SELECT ap_invoice_id, vendor_id, invoice_date, invoice_date + payment_terms_days AS due_date,
  CAST(xround(500 + ra * ra * 80000, 2) AS DECIMAL(14,2)) AS amount_local,
  CASE country_code WHEN 'DE' THEN 'EUR' WHEN 'IT' THEN 'EUR' WHEN 'IE' THEN 'EUR' WHEN 'GB' THEN 'GBP' ELSE 'USD' END AS currency_code,
  CASE WHEN rs < 0.02 THEN 'void' WHEN rs < 0.05 THEN 'disputed' WHEN invoice_date + payment_terms_days > DATE '2025-11-30' THEN 'open' ELSE 'paid' END AS status,
  CASE WHEN rs >= 0.05 AND invoice_date + payment_terms_days <= DATE '2025-11-30' THEN invoice_date + payment_terms_days - CAST(ri(rs, 5) AS INTEGER) END AS paid_date
FROM b
""")

step("finance.period_close_log", """
INSERT INTO finance.period_close_log BY NAME
SELECT CAST(fp.fiscal_period_id * 10 + k AS INTEGER) AS log_id, fp.fiscal_period_id,
  ['Bank reconciliation', 'Revenue cut-off', 'Inventory count', 'Accruals', 'Management sign-off'][k] AS step,
  ts(fp.end_date + CAST(k AS INTEGER), 50400 + ri(u(fp.fiscal_period_id * 10 + k, 895), 14400)) AS completed_at,
  CAST(pick([901, 905, 912, 950], u(fp.fiscal_period_id * 10 + k, 896)) AS INTEGER) AS completed_by
FROM finance.fiscal_periods fp, range(1, 6) t(k)
WHERE fp.is_closed AND fp.start_date >= DATE '2022-02-01'
""")

step("legacy.stores", """
INSERT INTO legacy.stores
SELECT s.store_id, upper(s.store_name), r.region_name FROM sales.stores s JOIN sales.regions r USING (region_id) WHERE s.store_type = 'physical'
UNION ALL SELECT * FROM (VALUES (49, 'VANTAGE BOSTON DOWNTOWN (CLOSED)', 'US Northeast'), (50, 'VANTAGE CLEVELAND (CLOSED)', 'US Midwest'))
""")


def sizes(scale: float) -> dict[str, int]:
    """Row-count knobs of the fact tables at ``scale`` (1 = the default warehouse)."""
    def n(x: float) -> int:
        return max(1, int(round(x * scale)))
    n_cust = n(16000)
    return {
        "N_CUST": n_cust, "N_CUST30": max(1, int(round(n_cust * 0.3))), "N_ORD": n(80000), "N_GUEST": n(5000),
        "N_SESS": n(100000), "N_GIFT": n(4000), "N_CART": n(30000), "N_INSTALL": n(8000), "N_PO": n(4000),
        "N_MOVE": n(40000), "N_AP": n(2500),
    }


def macros(seed: int = 0) -> list[str]:
    """The generator's macros; ``seed`` moves every pseudo-random number (0: the pinned warehouse)."""
    return [m.replace("$SEED", str(12345 + 1000003 * seed)) for m in MACROS]


def statements(scale: float) -> list[tuple[str, str]]:
    """The fill steps with the sizes of ``scale`` substituted."""
    values = sizes(scale)
    values["STOCK_SHARE"] = 0.35 if scale >= 0.5 else 0.15  # type: ignore[assignment]
    out = []
    for label, sql in STEPS:
        for key in sorted(values, key=len, reverse=True):
            sql = sql.replace("$" + key, str(values[key]))
        out.append((label, sql))
    return out
