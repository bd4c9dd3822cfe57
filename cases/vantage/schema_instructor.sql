-- Vantage Retail Group data warehouse, snapshot 2025-11-30 (instructor edition, with -- TRAP: annotations).
-- 126 tables in the schemas finance, sales, orders, returns, marketing, web, hr, ops, legacy.
-- Column comments are free text maintained by the data teams; not all of them are current.

-- TRAP: the ERP cutover on 2024-06-30 froze the *_old / *_v1 / *_bak tables and the legacy schema;
-- TRAP: several of them still coincide with the live tables before the cutover.

CREATE SCHEMA finance;
CREATE SCHEMA sales;
CREATE SCHEMA orders;
CREATE SCHEMA returns;
CREATE SCHEMA marketing;
CREATE SCHEMA web;
CREATE SCHEMA hr;
CREATE SCHEMA ops;
CREATE SCHEMA legacy;

CREATE TABLE finance.ap_invoices (
    ap_invoice_id BIGINT NOT NULL,
    vendor_id INTEGER NOT NULL,
    invoice_date DATE NOT NULL,
    due_date DATE NOT NULL,
    amount_local DECIMAL(14,2) NOT NULL,
    currency_code VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    paid_date DATE
);
COMMENT ON TABLE finance.ap_invoices IS 'Vendor invoices (accounts payable).';
COMMENT ON COLUMN finance.ap_invoices.ap_invoice_id IS 'invoice id';
COMMENT ON COLUMN finance.ap_invoices.vendor_id IS 'vendor';
COMMENT ON COLUMN finance.ap_invoices.invoice_date IS 'invoice date';
COMMENT ON COLUMN finance.ap_invoices.due_date IS 'due date';
COMMENT ON COLUMN finance.ap_invoices.amount_local IS 'amount in invoice currency';
COMMENT ON COLUMN finance.ap_invoices.currency_code IS 'currency';
COMMENT ON COLUMN finance.ap_invoices.status IS 'open, paid, disputed, void';
COMMENT ON COLUMN finance.ap_invoices.paid_date IS 'payment date';

CREATE TABLE finance.budgets (
    budget_id INTEGER NOT NULL,
    fiscal_period_id INTEGER NOT NULL,
    cost_center_id INTEGER NOT NULL,
    revenue_budget_usd DECIMAL(14,2) NOT NULL,
    opex_budget_usd DECIMAL(14,2) NOT NULL,
    version VARCHAR NOT NULL  -- TRAP: two versions per period from FY2025; filter on one
);
COMMENT ON TABLE finance.budgets IS 'Monthly budget by cost center.';
COMMENT ON COLUMN finance.budgets.budget_id IS 'budget line id';
COMMENT ON COLUMN finance.budgets.fiscal_period_id IS 'fiscal period';
COMMENT ON COLUMN finance.budgets.cost_center_id IS 'cost center';
COMMENT ON COLUMN finance.budgets.revenue_budget_usd IS 'budgeted revenue';
COMMENT ON COLUMN finance.budgets.opex_budget_usd IS 'budgeted operating expense';
COMMENT ON COLUMN finance.budgets.version IS 'original or reforecast';

CREATE TABLE finance.cost_centers (
    cost_center_id INTEGER NOT NULL,
    cost_center_name VARCHAR NOT NULL,
    store_id INTEGER,
    department_id INTEGER,
    country_code VARCHAR NOT NULL
);
COMMENT ON TABLE finance.cost_centers IS 'Cost centers: one per store or storefront and one per head-office department.';
COMMENT ON COLUMN finance.cost_centers.cost_center_id IS 'cost center id';
COMMENT ON COLUMN finance.cost_centers.cost_center_name IS 'name';
COMMENT ON COLUMN finance.cost_centers.store_id IS 'store for store cost centers';
COMMENT ON COLUMN finance.cost_centers.department_id IS 'department for head-office cost centers (hr.departments)';
COMMENT ON COLUMN finance.cost_centers.country_code IS 'country';

CREATE TABLE finance.currencies (
    currency_code VARCHAR NOT NULL,
    currency_name VARCHAR NOT NULL,
    minor_units INTEGER NOT NULL,
    is_reporting BOOLEAN NOT NULL
);
COMMENT ON TABLE finance.currencies IS 'Currencies the group trades in.';
COMMENT ON COLUMN finance.currencies.currency_code IS 'ISO 4217 code';
COMMENT ON COLUMN finance.currencies.currency_name IS 'name';
COMMENT ON COLUMN finance.currencies.minor_units IS 'decimal places';
COMMENT ON COLUMN finance.currencies.is_reporting IS 'TRUE for the group reporting currency (USD)';

CREATE TABLE finance.fiscal_periods (
    fiscal_period_id INTEGER NOT NULL,
    fiscal_year INTEGER NOT NULL,
    fiscal_period INTEGER NOT NULL,
    fiscal_quarter INTEGER NOT NULL,
    start_date DATE NOT NULL,
    end_date DATE NOT NULL,
    is_closed BOOLEAN NOT NULL
);
COMMENT ON TABLE finance.fiscal_periods IS 'Fiscal periods. The fiscal year starts on February 1 and is named after the calendar year in which it starts (FY2025 = 2025-02-01 to 2026-01-31).';
COMMENT ON COLUMN finance.fiscal_periods.fiscal_period_id IS 'yyyymm-style id of the fiscal period (fiscal year * 100 + period)';
COMMENT ON COLUMN finance.fiscal_periods.fiscal_year IS 'fiscal year';
COMMENT ON COLUMN finance.fiscal_periods.fiscal_period IS 'period 1-12 (1 = February)';
COMMENT ON COLUMN finance.fiscal_periods.fiscal_quarter IS 'quarter 1-4';
COMMENT ON COLUMN finance.fiscal_periods.start_date IS 'first day';
COMMENT ON COLUMN finance.fiscal_periods.end_date IS 'last day';
COMMENT ON COLUMN finance.fiscal_periods.is_closed IS 'period closed for posting';

-- TRAP: Published on business days only (no Saturday/Sunday rows) and there is no USD row: convert with the latest rate on or before the date (ASOF join) and treat USD as 1.
CREATE TABLE finance.fx_rates (
    rate_date DATE NOT NULL,
    currency_code VARCHAR NOT NULL,
    usd_per_unit DECIMAL(12,6) NOT NULL,  -- TRAP: STALE COMMENT: the value is USD per 1 unit of the currency (multiply local amounts by it)
    source VARCHAR NOT NULL
);
COMMENT ON TABLE finance.fx_rates IS 'Daily reference exchange rates.';
COMMENT ON COLUMN finance.fx_rates.rate_date IS 'publication date';
COMMENT ON COLUMN finance.fx_rates.currency_code IS 'ISO currency code';
COMMENT ON COLUMN finance.fx_rates.usd_per_unit IS 'units of this currency per 1 USD';
COMMENT ON COLUMN finance.fx_rates.source IS 'rate provider';

-- TRAP: deprecated table (finance.fx_rates_bak); never query it.
-- TRAP: DEPRECATED backup taken when the rate provider changed on 2025-01-01; identical before that date, old-provider rates after it.
CREATE TABLE finance.fx_rates_bak (
    rate_date DATE NOT NULL,
    currency_code VARCHAR NOT NULL,
    usd_per_unit DECIMAL(12,6) NOT NULL,
    source VARCHAR NOT NULL
);
COMMENT ON TABLE finance.fx_rates_bak IS 'Exchange rates (backup).';
COMMENT ON COLUMN finance.fx_rates_bak.rate_date IS 'rate date';
COMMENT ON COLUMN finance.fx_rates_bak.currency_code IS 'currency';
COMMENT ON COLUMN finance.fx_rates_bak.usd_per_unit IS 'USD per unit';
COMMENT ON COLUMN finance.fx_rates_bak.source IS 'provider';

CREATE TABLE finance.gl_accounts (
    gl_account_id INTEGER NOT NULL,
    account_name VARCHAR NOT NULL,
    account_type VARCHAR NOT NULL,
    is_active BOOLEAN NOT NULL
);
COMMENT ON TABLE finance.gl_accounts IS 'General ledger chart of accounts.';
COMMENT ON COLUMN finance.gl_accounts.gl_account_id IS 'account number';
COMMENT ON COLUMN finance.gl_accounts.account_name IS 'account name';
COMMENT ON COLUMN finance.gl_accounts.account_type IS 'asset, liability, equity, revenue, expense';
COMMENT ON COLUMN finance.gl_accounts.is_active IS 'account open for posting';

CREATE TABLE finance.gl_entries (
    entry_id BIGINT NOT NULL,
    fiscal_period_id INTEGER NOT NULL,
    gl_account_id INTEGER NOT NULL,
    cost_center_id INTEGER NOT NULL,
    amount_usd DECIMAL(16,2) NOT NULL,
    posted_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE finance.gl_entries IS 'Monthly general ledger balances by account and cost center.';
COMMENT ON COLUMN finance.gl_entries.entry_id IS 'entry id';
COMMENT ON COLUMN finance.gl_entries.fiscal_period_id IS 'fiscal period (finance.fiscal_periods)';
COMMENT ON COLUMN finance.gl_entries.gl_account_id IS 'account';
COMMENT ON COLUMN finance.gl_entries.cost_center_id IS 'cost center';
COMMENT ON COLUMN finance.gl_entries.amount_usd IS 'net movement in USD (debit positive)';
COMMENT ON COLUMN finance.gl_entries.posted_at IS 'posting time';

CREATE TABLE finance.payments (
    payment_id BIGINT NOT NULL,
    invoice_id BIGINT NOT NULL,
    paid_date DATE NOT NULL,
    amount_local DECIMAL(14,2) NOT NULL,
    currency_code VARCHAR NOT NULL,
    method VARCHAR NOT NULL
);
COMMENT ON TABLE finance.payments IS 'Payments received against B2B invoices (net-30 accounts).';
COMMENT ON COLUMN finance.payments.payment_id IS 'payment id';
COMMENT ON COLUMN finance.payments.invoice_id IS 'invoice paid (sales.invoices)';
COMMENT ON COLUMN finance.payments.paid_date IS 'date received';
COMMENT ON COLUMN finance.payments.amount_local IS 'amount in invoice currency';
COMMENT ON COLUMN finance.payments.currency_code IS 'currency';
COMMENT ON COLUMN finance.payments.method IS 'wire, ach, card, cheque';

CREATE TABLE finance.period_close_log (
    log_id INTEGER NOT NULL,
    fiscal_period_id INTEGER NOT NULL,
    step VARCHAR NOT NULL,
    completed_at TIMESTAMP NOT NULL,
    completed_by INTEGER NOT NULL
);
COMMENT ON TABLE finance.period_close_log IS 'Month-end close checklist events.';
COMMENT ON COLUMN finance.period_close_log.log_id IS 'id';
COMMENT ON COLUMN finance.period_close_log.fiscal_period_id IS 'period';
COMMENT ON COLUMN finance.period_close_log.step IS 'close step';
COMMENT ON COLUMN finance.period_close_log.completed_at IS 'completion time';
COMMENT ON COLUMN finance.period_close_log.completed_by IS 'employee (hr.employees)';

-- TRAP: Not part of canonical recognized revenue.
CREATE TABLE finance.revenue_adjustments (
    adjustment_id INTEGER NOT NULL,
    fiscal_period_id INTEGER NOT NULL,
    cost_center_id INTEGER NOT NULL,
    amount_usd DECIMAL(14,2) NOT NULL,
    reason VARCHAR NOT NULL,
    status VARCHAR NOT NULL
);
COMMENT ON TABLE finance.revenue_adjustments IS 'Manual revenue adjustments (accruals, corrections) booked by finance.';
COMMENT ON COLUMN finance.revenue_adjustments.adjustment_id IS 'id';
COMMENT ON COLUMN finance.revenue_adjustments.fiscal_period_id IS 'period';
COMMENT ON COLUMN finance.revenue_adjustments.cost_center_id IS 'cost center';
COMMENT ON COLUMN finance.revenue_adjustments.amount_usd IS 'adjustment (signed)';
COMMENT ON COLUMN finance.revenue_adjustments.reason IS 'reason';
COMMENT ON COLUMN finance.revenue_adjustments.status IS 'posted or pending';

-- TRAP: CANONICAL revenue. Count only posting_status = 'posted'. Pending rows (last days before the snapshot) and reversed duplicate postings must be excluded. Test accounts, cancelled/void and soft-deleted orders never reach this table.
CREATE TABLE finance.revenue_recognized (
    revenue_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    order_line_id BIGINT NOT NULL,
    store_id INTEGER NOT NULL,
    cost_center_id INTEGER NOT NULL,
    recognized_date DATE NOT NULL,
    currency_code VARCHAR NOT NULL,
    amount_local DECIMAL(14,2) NOT NULL,
    fx_rate DECIMAL(12,6) NOT NULL,
    amount_usd DECIMAL(14,2) NOT NULL,
    posting_status VARCHAR NOT NULL DEFAULT 'pending',  -- TRAP: only 'posted' is revenue; about 1% of lines also carry a 'reversed' duplicate posting
    posted_at TIMESTAMP,
    source_system VARCHAR NOT NULL
);
COMMENT ON TABLE finance.revenue_recognized IS 'Recognized revenue: one row per order line when it is recognized (at shipment for online orders, at sale for store orders). Amounts are net of line discounts and exclude tax and shipping.';
COMMENT ON COLUMN finance.revenue_recognized.revenue_id IS 'surrogate key';
COMMENT ON COLUMN finance.revenue_recognized.order_id IS 'order (orders.orders)';
COMMENT ON COLUMN finance.revenue_recognized.order_line_id IS 'order line (orders.order_lines)';
COMMENT ON COLUMN finance.revenue_recognized.store_id IS 'selling store or online storefront (sales.stores)';
COMMENT ON COLUMN finance.revenue_recognized.cost_center_id IS 'cost center the revenue is booked to (finance.cost_centers)';
COMMENT ON COLUMN finance.revenue_recognized.recognized_date IS 'date the revenue is recognized';
COMMENT ON COLUMN finance.revenue_recognized.currency_code IS 'transaction currency';
COMMENT ON COLUMN finance.revenue_recognized.amount_local IS 'recognized amount in the transaction currency, net of line discounts';
COMMENT ON COLUMN finance.revenue_recognized.fx_rate IS 'USD per unit of the transaction currency used for conversion';
COMMENT ON COLUMN finance.revenue_recognized.amount_usd IS 'recognized amount in USD, net of line discounts';
COMMENT ON COLUMN finance.revenue_recognized.posting_status IS 'posted, pending or reversed';
COMMENT ON COLUMN finance.revenue_recognized.posted_at IS 'when the entry was posted to the ledger';
COMMENT ON COLUMN finance.revenue_recognized.source_system IS 'erp_legacy until the 2024-06-30 cutover, erp_nova after';

-- TRAP: deprecated table (finance.revenue_recognized_v1); never query it.
-- TRAP: DEPRECATED. Frozen copy of the pre-cutover pipeline: identical to revenue_recognized up to 2024-06-30, but a zombie legacy job still loads it: after the cutover it only sees store (POS) sales and loads them gross of discounts. Numbers coincide before the cutover and diverge after it.
CREATE TABLE finance.revenue_recognized_v1 (
    revenue_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    order_line_id BIGINT NOT NULL,
    store_id INTEGER NOT NULL,
    cost_center_id INTEGER NOT NULL,
    recognized_date DATE NOT NULL,
    currency_code VARCHAR NOT NULL,
    amount_local DECIMAL(14,2) NOT NULL,
    fx_rate DECIMAL(12,6) NOT NULL,
    amount_usd DECIMAL(14,2) NOT NULL,  -- TRAP: after 2024-06-30: gross of discounts, store channel only
    posting_status VARCHAR NOT NULL,
    posted_at TIMESTAMP,
    source_system VARCHAR NOT NULL
);
COMMENT ON TABLE finance.revenue_recognized_v1 IS 'Recognized revenue (v1 pipeline).';
COMMENT ON COLUMN finance.revenue_recognized_v1.revenue_id IS 'surrogate key';
COMMENT ON COLUMN finance.revenue_recognized_v1.order_id IS 'order';
COMMENT ON COLUMN finance.revenue_recognized_v1.order_line_id IS 'order line';
COMMENT ON COLUMN finance.revenue_recognized_v1.store_id IS 'store';
COMMENT ON COLUMN finance.revenue_recognized_v1.cost_center_id IS 'cost center';
COMMENT ON COLUMN finance.revenue_recognized_v1.recognized_date IS 'recognition date';
COMMENT ON COLUMN finance.revenue_recognized_v1.currency_code IS 'transaction currency';
COMMENT ON COLUMN finance.revenue_recognized_v1.amount_local IS 'amount in transaction currency';
COMMENT ON COLUMN finance.revenue_recognized_v1.fx_rate IS 'conversion rate';
COMMENT ON COLUMN finance.revenue_recognized_v1.amount_usd IS 'recognized amount in USD';
COMMENT ON COLUMN finance.revenue_recognized_v1.posting_status IS 'posted, pending or reversed';
COMMENT ON COLUMN finance.revenue_recognized_v1.posted_at IS 'posting timestamp';
COMMENT ON COLUMN finance.revenue_recognized_v1.source_system IS 'source ERP';

CREATE TABLE finance.tax_rates (
    country_code VARCHAR NOT NULL,
    tax_rate DECIMAL(6,4) NOT NULL,
    valid_from DATE NOT NULL,
    valid_to DATE
);
COMMENT ON TABLE finance.tax_rates IS 'Sales tax / VAT rates by country.';
COMMENT ON COLUMN finance.tax_rates.country_code IS 'country';
COMMENT ON COLUMN finance.tax_rates.tax_rate IS 'rate as a fraction';
COMMENT ON COLUMN finance.tax_rates.valid_from IS 'first day the rate applies';
COMMENT ON COLUMN finance.tax_rates.valid_to IS 'last day, NULL while current';

CREATE TABLE finance.vendors (
    vendor_id INTEGER NOT NULL,
    vendor_name VARCHAR NOT NULL,
    country_code VARCHAR NOT NULL,
    payment_terms_days INTEGER NOT NULL,
    supplier_id INTEGER
);
COMMENT ON TABLE finance.vendors IS 'Suppliers of goods and services as set up in accounts payable.';
COMMENT ON COLUMN finance.vendors.vendor_id IS 'vendor id';
COMMENT ON COLUMN finance.vendors.vendor_name IS 'legal name';
COMMENT ON COLUMN finance.vendors.country_code IS 'country';
COMMENT ON COLUMN finance.vendors.payment_terms_days IS 'payment terms';
COMMENT ON COLUMN finance.vendors.supplier_id IS 'matching ops.suppliers id for merchandise vendors';

-- TRAP: Gross bookings: every order including cancelled, void and test, before discounts, dated in UTC.
CREATE TABLE sales.bookings_gross (
    order_id BIGINT NOT NULL,
    booking_date DATE NOT NULL,
    store_id INTEGER NOT NULL,
    order_status VARCHAR NOT NULL,
    gross_amount_usd DECIMAL(14,2) NOT NULL
);
COMMENT ON TABLE sales.bookings_gross IS 'Gross bookings per order.';
COMMENT ON COLUMN sales.bookings_gross.order_id IS 'order';
COMMENT ON COLUMN sales.bookings_gross.booking_date IS 'booking date (UTC)';
COMMENT ON COLUMN sales.bookings_gross.store_id IS 'store';
COMMENT ON COLUMN sales.bookings_gross.order_status IS 'order status at load time';
COMMENT ON COLUMN sales.bookings_gross.gross_amount_usd IS 'merchandise value before discounts, USD';

CREATE TABLE sales.channels (
    channel_id INTEGER NOT NULL,
    channel_name VARCHAR NOT NULL,
    is_online BOOLEAN NOT NULL
);
COMMENT ON TABLE sales.channels IS 'Sales channels.';
COMMENT ON COLUMN sales.channels.channel_id IS 'id';
COMMENT ON COLUMN sales.channels.channel_name IS 'store, web, app, marketplace, phone';
COMMENT ON COLUMN sales.channels.is_online IS 'online channel';

CREATE TABLE sales.customer_addresses (
    address_id BIGINT NOT NULL,
    customer_id BIGINT NOT NULL,
    address_type VARCHAR NOT NULL,
    city VARCHAR NOT NULL,
    postal_code VARCHAR NOT NULL,
    country_code VARCHAR NOT NULL,
    is_default BOOLEAN NOT NULL
);
COMMENT ON TABLE sales.customer_addresses IS 'Customer postal addresses.';
COMMENT ON COLUMN sales.customer_addresses.address_id IS 'id';
COMMENT ON COLUMN sales.customer_addresses.customer_id IS 'customer';
COMMENT ON COLUMN sales.customer_addresses.address_type IS 'billing or shipping';
COMMENT ON COLUMN sales.customer_addresses.city IS 'city';
COMMENT ON COLUMN sales.customer_addresses.postal_code IS 'postal code';
COMMENT ON COLUMN sales.customer_addresses.country_code IS 'country';
COMMENT ON COLUMN sales.customer_addresses.is_default IS 'default address of that type';

CREATE TABLE sales.customer_segments (
    segment VARCHAR NOT NULL,
    description VARCHAR NOT NULL,
    min_annual_spend_usd DECIMAL(12,2)
);
COMMENT ON TABLE sales.customer_segments IS 'Definitions of customer segments.';
COMMENT ON COLUMN sales.customer_segments.segment IS 'segment name';
COMMENT ON COLUMN sales.customer_segments.description IS 'definition';
COMMENT ON COLUMN sales.customer_segments.min_annual_spend_usd IS 'threshold';

CREATE TABLE sales.customers (
    customer_id BIGINT NOT NULL,
    customer_code VARCHAR NOT NULL,
    first_name VARCHAR,
    last_name VARCHAR,
    email VARCHAR,
    country_code VARCHAR NOT NULL,
    home_store_id INTEGER NOT NULL,
    segment VARCHAR NOT NULL,
    loyalty_tier VARCHAR NOT NULL,
    signup_at TIMESTAMP NOT NULL,
    birth_year INTEGER,
    marketing_opt_in BOOLEAN NOT NULL,
    is_test BOOLEAN NOT NULL DEFAULT false,  -- TRAP: exclude from every business metric
    deleted_at TIMESTAMP  -- TRAP: soft delete: erased customers stay in the table
);
COMMENT ON TABLE sales.customers IS 'Customers (current state). One row per customer account.';
COMMENT ON COLUMN sales.customers.customer_id IS 'customer id';
COMMENT ON COLUMN sales.customers.customer_code IS 'external customer number';
COMMENT ON COLUMN sales.customers.first_name IS 'first name (NULL once erased)';
COMMENT ON COLUMN sales.customers.last_name IS 'last name (NULL once erased)';
COMMENT ON COLUMN sales.customers.email IS 'email (NULL once erased)';
COMMENT ON COLUMN sales.customers.country_code IS 'country of residence';
COMMENT ON COLUMN sales.customers.home_store_id IS 'nearest physical store (sales.stores)';
COMMENT ON COLUMN sales.customers.segment IS 'Consumer, Premium or Business (current value; history in sales.dim_customer)';
COMMENT ON COLUMN sales.customers.loyalty_tier IS 'none, silver, gold, platinum';
COMMENT ON COLUMN sales.customers.signup_at IS 'account creation (UTC)';
COMMENT ON COLUMN sales.customers.birth_year IS 'year of birth';
COMMENT ON COLUMN sales.customers.marketing_opt_in IS 'consented to marketing';
COMMENT ON COLUMN sales.customers.is_test IS 'internal QA / test account';
COMMENT ON COLUMN sales.customers.deleted_at IS 'set when the account was erased on request (soft delete)';

-- TRAP: Pre-aggregated on the UTC date, includes test accounts and soft-deleted orders; excludes cancelled/void. Does not match finance revenue.
CREATE TABLE sales.daily_sales_summary (
    summary_date DATE NOT NULL,
    store_id INTEGER NOT NULL,
    orders_count INTEGER NOT NULL,
    units_sold INTEGER NOT NULL,
    net_sales_usd DECIMAL(14,2) NOT NULL,
    gross_sales_usd DECIMAL(14,2) NOT NULL
);
COMMENT ON TABLE sales.daily_sales_summary IS 'Daily sales by store (dashboard feed).';
COMMENT ON COLUMN sales.daily_sales_summary.summary_date IS 'day';
COMMENT ON COLUMN sales.daily_sales_summary.store_id IS 'store';
COMMENT ON COLUMN sales.daily_sales_summary.orders_count IS 'orders';
COMMENT ON COLUMN sales.daily_sales_summary.units_sold IS 'units';
COMMENT ON COLUMN sales.daily_sales_summary.net_sales_usd IS 'net sales in USD';
COMMENT ON COLUMN sales.daily_sales_summary.gross_sales_usd IS 'gross sales in USD';

-- TRAP: SCD2: pick the version valid on the date of interest (valid_from <= d < valid_to); is_current is only right for today.
CREATE TABLE sales.dim_customer (
    customer_sk BIGINT NOT NULL,
    customer_id BIGINT NOT NULL,
    segment VARCHAR NOT NULL,
    loyalty_tier VARCHAR NOT NULL,
    country_code VARCHAR NOT NULL,
    valid_from DATE NOT NULL,
    valid_to DATE NOT NULL DEFAULT CAST('9999-12-31' AS DATE),
    is_current BOOLEAN NOT NULL
);
COMMENT ON TABLE sales.dim_customer IS 'Customer dimension, type-2 history of segment, tier and country.';
COMMENT ON COLUMN sales.dim_customer.customer_sk IS 'surrogate key of the version';
COMMENT ON COLUMN sales.dim_customer.customer_id IS 'customer';
COMMENT ON COLUMN sales.dim_customer.segment IS 'segment during the validity window';
COMMENT ON COLUMN sales.dim_customer.loyalty_tier IS 'loyalty tier during the window';
COMMENT ON COLUMN sales.dim_customer.country_code IS 'country during the window';
COMMENT ON COLUMN sales.dim_customer.valid_from IS 'first day the version applies';
COMMENT ON COLUMN sales.dim_customer.valid_to IS 'day the next version starts (exclusive); 9999-12-31 for the current version';
COMMENT ON COLUMN sales.dim_customer.is_current IS 'current version';

CREATE TABLE sales.invoice_lines (
    invoice_line_id BIGINT NOT NULL,
    invoice_id BIGINT NOT NULL,
    order_line_id BIGINT,
    line_type VARCHAR NOT NULL,
    amount_local DECIMAL(14,2) NOT NULL
);
COMMENT ON TABLE sales.invoice_lines IS 'Invoice detail for B2B (net-30) invoices.';
COMMENT ON COLUMN sales.invoice_lines.invoice_line_id IS 'id';
COMMENT ON COLUMN sales.invoice_lines.invoice_id IS 'invoice';
COMMENT ON COLUMN sales.invoice_lines.order_line_id IS 'order line, NULL for tax and shipping lines';
COMMENT ON COLUMN sales.invoice_lines.line_type IS 'merchandise, tax, shipping';
COMMENT ON COLUMN sales.invoice_lines.amount_local IS 'amount in invoice currency';

CREATE TABLE sales.invoices (
    invoice_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    customer_id BIGINT NOT NULL,
    invoice_date DATE NOT NULL,
    due_date DATE NOT NULL,
    currency_code VARCHAR NOT NULL,
    total_local DECIMAL(14,2) NOT NULL,
    status VARCHAR NOT NULL
);
COMMENT ON TABLE sales.invoices IS 'Invoices issued for orders.';
COMMENT ON COLUMN sales.invoices.invoice_id IS 'invoice id';
COMMENT ON COLUMN sales.invoices.order_id IS 'order';
COMMENT ON COLUMN sales.invoices.customer_id IS 'customer billed';
COMMENT ON COLUMN sales.invoices.invoice_date IS 'issue date';
COMMENT ON COLUMN sales.invoices.due_date IS 'due date';
COMMENT ON COLUMN sales.invoices.currency_code IS 'currency';
COMMENT ON COLUMN sales.invoices.total_local IS 'invoice total incl. tax and shipping, invoice currency';
COMMENT ON COLUMN sales.invoices.status IS 'paid or open';

CREATE TABLE sales.loyalty_accounts (
    loyalty_account_id BIGINT NOT NULL,
    customer_id BIGINT NOT NULL,
    enrolled_date DATE NOT NULL,
    points_balance INTEGER NOT NULL,
    tier VARCHAR NOT NULL
);
COMMENT ON TABLE sales.loyalty_accounts IS 'Loyalty programme membership.';
COMMENT ON COLUMN sales.loyalty_accounts.loyalty_account_id IS 'id';
COMMENT ON COLUMN sales.loyalty_accounts.customer_id IS 'customer';
COMMENT ON COLUMN sales.loyalty_accounts.enrolled_date IS 'enrolment';
COMMENT ON COLUMN sales.loyalty_accounts.points_balance IS 'current points';
COMMENT ON COLUMN sales.loyalty_accounts.tier IS 'tier';

CREATE TABLE sales.product_categories (
    category_id INTEGER NOT NULL,
    category_name VARCHAR NOT NULL,
    department_name VARCHAR NOT NULL,
    return_window_days INTEGER NOT NULL
);
COMMENT ON TABLE sales.product_categories IS 'Product categories and their departments.';
COMMENT ON COLUMN sales.product_categories.category_id IS 'id';
COMMENT ON COLUMN sales.product_categories.category_name IS 'category';
COMMENT ON COLUMN sales.product_categories.department_name IS 'merchandising department';
COMMENT ON COLUMN sales.product_categories.return_window_days IS 'return window';

-- TRAP: SCD2 of list prices; store prices abroad are local price lists, not conversions of this.
CREATE TABLE sales.product_price_history (
    price_version_id BIGINT NOT NULL,
    product_id INTEGER NOT NULL,
    list_price_usd DECIMAL(10,2) NOT NULL,
    valid_from DATE NOT NULL,
    valid_to DATE NOT NULL,
    is_current BOOLEAN NOT NULL
);
COMMENT ON TABLE sales.product_price_history IS 'List price history (type-2).';
COMMENT ON COLUMN sales.product_price_history.price_version_id IS 'version id';
COMMENT ON COLUMN sales.product_price_history.product_id IS 'product';
COMMENT ON COLUMN sales.product_price_history.list_price_usd IS 'list price in USD';
COMMENT ON COLUMN sales.product_price_history.valid_from IS 'first day';
COMMENT ON COLUMN sales.product_price_history.valid_to IS 'day the next price starts (exclusive); 9999-12-31 if current';
COMMENT ON COLUMN sales.product_price_history.is_current IS 'current price';

CREATE TABLE sales.products (
    product_id INTEGER NOT NULL,
    sku VARCHAR NOT NULL,
    product_name VARCHAR NOT NULL,
    category_id INTEGER NOT NULL,
    brand VARCHAR NOT NULL,
    list_price_usd DECIMAL(10,2) NOT NULL,
    launched_date DATE NOT NULL,
    discontinued_date DATE,
    is_active BOOLEAN NOT NULL
);
COMMENT ON TABLE sales.products IS 'Product master (current).';
COMMENT ON COLUMN sales.products.product_id IS 'product id';
COMMENT ON COLUMN sales.products.sku IS 'stock keeping unit';
COMMENT ON COLUMN sales.products.product_name IS 'name';
COMMENT ON COLUMN sales.products.category_id IS 'category (sales.product_categories)';
COMMENT ON COLUMN sales.products.brand IS 'brand';
COMMENT ON COLUMN sales.products.list_price_usd IS 'current list price in USD (history in sales.product_price_history)';
COMMENT ON COLUMN sales.products.launched_date IS 'first day on sale';
COMMENT ON COLUMN sales.products.discontinued_date IS 'last day on sale';
COMMENT ON COLUMN sales.products.is_active IS 'on sale today';

CREATE TABLE sales.promotions (
    promotion_id INTEGER NOT NULL,
    promotion_name VARCHAR NOT NULL,
    discount_pct DECIMAL(5,2) NOT NULL,
    start_date DATE NOT NULL,
    end_date DATE NOT NULL,
    category_id INTEGER
);
COMMENT ON TABLE sales.promotions IS 'Price promotions.';
COMMENT ON COLUMN sales.promotions.promotion_id IS 'id';
COMMENT ON COLUMN sales.promotions.promotion_name IS 'name';
COMMENT ON COLUMN sales.promotions.discount_pct IS 'discount percentage (0-100)';
COMMENT ON COLUMN sales.promotions.start_date IS 'first day';
COMMENT ON COLUMN sales.promotions.end_date IS 'last day';
COMMENT ON COLUMN sales.promotions.category_id IS 'category targeted, NULL for site-wide';

CREATE TABLE sales.regions (
    region_id INTEGER NOT NULL,
    region_name VARCHAR NOT NULL,
    country_code VARCHAR NOT NULL,
    regional_manager_id INTEGER
);
COMMENT ON TABLE sales.regions IS 'Sales regions.';
COMMENT ON COLUMN sales.regions.region_id IS 'id';
COMMENT ON COLUMN sales.regions.region_name IS 'name';
COMMENT ON COLUMN sales.regions.country_code IS 'country';
COMMENT ON COLUMN sales.regions.regional_manager_id IS 'employee (hr.employees)';

-- TRAP: BILLING, not revenue: one row per invoice line on the billed date, including tax and shipping lines, including test accounts. Not net of returns.
CREATE TABLE sales.rev_billed (
    billed_line_id BIGINT NOT NULL,
    invoice_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    line_type VARCHAR NOT NULL,
    billed_date DATE NOT NULL,
    currency_code VARCHAR NOT NULL,
    amount_usd DECIMAL(14,2) NOT NULL  -- TRAP: STALE COMMENT: billed amount, includes tax and shipping lines
);
COMMENT ON TABLE sales.rev_billed IS 'Revenue by invoice line.';
COMMENT ON COLUMN sales.rev_billed.billed_line_id IS 'id';
COMMENT ON COLUMN sales.rev_billed.invoice_id IS 'invoice';
COMMENT ON COLUMN sales.rev_billed.order_id IS 'order';
COMMENT ON COLUMN sales.rev_billed.line_type IS 'merchandise, tax, shipping';
COMMENT ON COLUMN sales.rev_billed.billed_date IS 'date billed';
COMMENT ON COLUMN sales.rev_billed.currency_code IS 'invoice currency';
COMMENT ON COLUMN sales.rev_billed.amount_usd IS 'net revenue in USD';

CREATE TABLE sales.sales_reps (
    sales_rep_id INTEGER NOT NULL,
    employee_id INTEGER NOT NULL,
    region_id INTEGER NOT NULL,
    quota_usd DECIMAL(14,2) NOT NULL
);
COMMENT ON TABLE sales.sales_reps IS 'B2B account managers.';
COMMENT ON COLUMN sales.sales_reps.sales_rep_id IS 'id';
COMMENT ON COLUMN sales.sales_reps.employee_id IS 'employee (hr.employees)';
COMMENT ON COLUMN sales.sales_reps.region_id IS 'region covered';
COMMENT ON COLUMN sales.sales_reps.quota_usd IS 'annual quota';

CREATE TABLE sales.stores (
    store_id INTEGER NOT NULL,
    store_name VARCHAR NOT NULL,
    store_type VARCHAR NOT NULL,
    region_id INTEGER NOT NULL,
    country_code VARCHAR NOT NULL,
    city VARCHAR NOT NULL,
    currency_code VARCHAR NOT NULL,
    timezone VARCHAR NOT NULL,
    utc_offset_minutes INTEGER NOT NULL,
    opened_date DATE NOT NULL,
    closed_date DATE,
    square_meters INTEGER
);
COMMENT ON TABLE sales.stores IS 'Stores and online storefronts.';
COMMENT ON COLUMN sales.stores.store_id IS 'store id';
COMMENT ON COLUMN sales.stores.store_name IS 'name';
COMMENT ON COLUMN sales.stores.store_type IS 'physical or online';
COMMENT ON COLUMN sales.stores.region_id IS 'sales region (sales.regions)';
COMMENT ON COLUMN sales.stores.country_code IS 'country';
COMMENT ON COLUMN sales.stores.city IS 'city';
COMMENT ON COLUMN sales.stores.currency_code IS 'selling currency';
COMMENT ON COLUMN sales.stores.timezone IS 'IANA time zone of the store';
COMMENT ON COLUMN sales.stores.utc_offset_minutes IS 'standard offset from UTC (DST is not applied in the warehouse)';
COMMENT ON COLUMN sales.stores.opened_date IS 'opening date';
COMMENT ON COLUMN sales.stores.closed_date IS 'closing date';
COMMENT ON COLUMN sales.stores.square_meters IS 'selling area (physical stores)';

CREATE TABLE orders.backorders (
    backorder_id BIGINT NOT NULL,
    order_line_id BIGINT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    expected_date DATE,
    resolved_at TIMESTAMP
);
COMMENT ON TABLE orders.backorders IS 'Order lines waiting for stock.';
COMMENT ON COLUMN orders.backorders.backorder_id IS 'id';
COMMENT ON COLUMN orders.backorders.order_line_id IS 'order line';
COMMENT ON COLUMN orders.backorders.created_at IS 'time';
COMMENT ON COLUMN orders.backorders.expected_date IS 'expected availability';
COMMENT ON COLUMN orders.backorders.resolved_at IS 'resolved';

CREATE TABLE orders.cart_items (
    cart_item_id BIGINT NOT NULL,
    cart_id BIGINT NOT NULL,
    product_id INTEGER NOT NULL,
    quantity INTEGER NOT NULL
);
COMMENT ON TABLE orders.cart_items IS 'Items in carts.';
COMMENT ON COLUMN orders.cart_items.cart_item_id IS 'id';
COMMENT ON COLUMN orders.cart_items.cart_id IS 'cart';
COMMENT ON COLUMN orders.cart_items.product_id IS 'product';
COMMENT ON COLUMN orders.cart_items.quantity IS 'units';

CREATE TABLE orders.carts (
    cart_id BIGINT NOT NULL,
    web_user_id BIGINT,
    created_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE orders.carts IS 'Abandoned shopping carts (carts that were checked out are purged at conversion).';
COMMENT ON COLUMN orders.carts.cart_id IS 'id';
COMMENT ON COLUMN orders.carts.web_user_id IS 'web user, NULL for guests';
COMMENT ON COLUMN orders.carts.created_at IS 'created (UTC)';

CREATE TABLE orders.gift_cards (
    gift_card_id BIGINT NOT NULL,
    issued_date DATE NOT NULL,
    initial_value_local DECIMAL(10,2) NOT NULL,
    currency_code VARCHAR NOT NULL,
    remaining_local DECIMAL(10,2) NOT NULL
);
COMMENT ON TABLE orders.gift_cards IS 'Gift cards sold.';
COMMENT ON COLUMN orders.gift_cards.gift_card_id IS 'id';
COMMENT ON COLUMN orders.gift_cards.issued_date IS 'issue date';
COMMENT ON COLUMN orders.gift_cards.initial_value_local IS 'value at issue';
COMMENT ON COLUMN orders.gift_cards.currency_code IS 'currency';
COMMENT ON COLUMN orders.gift_cards.remaining_local IS 'remaining balance';

CREATE TABLE orders.order_lines (
    order_line_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    line_no INTEGER NOT NULL,
    product_id INTEGER NOT NULL,
    quantity INTEGER NOT NULL,
    unit_price DECIMAL(10,2) NOT NULL,  -- TRAP: STALE COMMENT: order currency (local price list)
    discount_amount DECIMAL(10,2) NOT NULL DEFAULT 0,
    line_status VARCHAR NOT NULL
);
COMMENT ON TABLE orders.order_lines IS 'Order lines.';
COMMENT ON COLUMN orders.order_lines.order_line_id IS 'id';
COMMENT ON COLUMN orders.order_lines.order_id IS 'order';
COMMENT ON COLUMN orders.order_lines.line_no IS 'line number within the order';
COMMENT ON COLUMN orders.order_lines.product_id IS 'product';
COMMENT ON COLUMN orders.order_lines.quantity IS 'units ordered';
COMMENT ON COLUMN orders.order_lines.unit_price IS 'unit price in USD';
COMMENT ON COLUMN orders.order_lines.discount_amount IS 'line discount, order currency';
COMMENT ON COLUMN orders.order_lines.line_status IS 'fulfilled, open or cancelled';

-- TRAP: deprecated table (orders.order_lines_bak); never query it.
-- TRAP: DEPRECATED backup of order_lines taken before the 2023-12-31 price correction; later lines are missing and some older unit prices differ.
CREATE TABLE orders.order_lines_bak (
    order_line_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    line_no INTEGER NOT NULL,
    product_id INTEGER NOT NULL,
    quantity INTEGER NOT NULL,
    unit_price DECIMAL(10,2) NOT NULL,
    discount_amount DECIMAL(10,2) NOT NULL,
    line_status VARCHAR NOT NULL
);
COMMENT ON TABLE orders.order_lines_bak IS 'Order lines (backup).';
COMMENT ON COLUMN orders.order_lines_bak.order_line_id IS 'id';
COMMENT ON COLUMN orders.order_lines_bak.order_id IS 'order';
COMMENT ON COLUMN orders.order_lines_bak.line_no IS 'line';
COMMENT ON COLUMN orders.order_lines_bak.product_id IS 'product';
COMMENT ON COLUMN orders.order_lines_bak.quantity IS 'units';
COMMENT ON COLUMN orders.order_lines_bak.unit_price IS 'unit price';
COMMENT ON COLUMN orders.order_lines_bak.discount_amount IS 'discount';
COMMENT ON COLUMN orders.order_lines_bak.line_status IS 'status';

CREATE TABLE orders.order_notes (
    note_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    note_type VARCHAR NOT NULL,
    note_text VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE orders.order_notes IS 'Free-text notes on orders.';
COMMENT ON COLUMN orders.order_notes.note_id IS 'id';
COMMENT ON COLUMN orders.order_notes.order_id IS 'order';
COMMENT ON COLUMN orders.order_notes.note_type IS 'customer, agent, system';
COMMENT ON COLUMN orders.order_notes.note_text IS 'text';
COMMENT ON COLUMN orders.order_notes.created_at IS 'time';

CREATE TABLE orders.order_promotions (
    order_line_id BIGINT NOT NULL,
    promotion_id INTEGER NOT NULL,
    discount_amount DECIMAL(10,2) NOT NULL
);
COMMENT ON TABLE orders.order_promotions IS 'Promotions applied to order lines.';
COMMENT ON COLUMN orders.order_promotions.order_line_id IS 'order line';
COMMENT ON COLUMN orders.order_promotions.promotion_id IS 'promotion (sales.promotions)';
COMMENT ON COLUMN orders.order_promotions.discount_amount IS 'discount granted, order currency';

CREATE TABLE orders.order_status_history (
    status_event_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    status VARCHAR NOT NULL,
    changed_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE orders.order_status_history IS 'Status transitions of orders (new ERP only, from 2024-07-01).';
COMMENT ON COLUMN orders.order_status_history.status_event_id IS 'id';
COMMENT ON COLUMN orders.order_status_history.order_id IS 'order';
COMMENT ON COLUMN orders.order_status_history.status IS 'new status';
COMMENT ON COLUMN orders.order_status_history.changed_at IS 'transition time (UTC)';

-- TRAP: ordered_at is UTC; order_date is the store-local business date. total_amount is in the order currency, not USD. Exclude cancelled and void orders, soft-deleted rows and test accounts for business metrics.
CREATE TABLE orders.orders (
    order_id BIGINT NOT NULL,
    customer_id BIGINT NOT NULL,
    store_id INTEGER NOT NULL,
    channel_id INTEGER NOT NULL,
    ordered_at TIMESTAMP NOT NULL,
    order_date DATE NOT NULL,  -- TRAP: store-local business date, differs from CAST(ordered_at AS DATE)
    status VARCHAR NOT NULL,  -- TRAP: void exists only after the 2024-06-30 cutover and means cancelled after payment
    currency_code VARCHAR NOT NULL,
    subtotal_amount DECIMAL(14,2) NOT NULL,
    discount_amount DECIMAL(14,2) NOT NULL DEFAULT 0,
    tax_amount DECIMAL(14,2) NOT NULL DEFAULT 0,
    shipping_amount DECIMAL(14,2) NOT NULL DEFAULT 0,
    total_amount DECIMAL(14,2) NOT NULL,  -- TRAP: STALE COMMENT: order currency (subtotal - discount + tax + shipping), not USD
    coupon_code VARCHAR,
    source_system VARCHAR NOT NULL,
    deleted_at TIMESTAMP  -- TRAP: soft delete
);
COMMENT ON TABLE orders.orders IS 'Customer orders, all channels. One row per order.';
COMMENT ON COLUMN orders.orders.order_id IS 'order id';
COMMENT ON COLUMN orders.orders.customer_id IS 'customer (sales.customers)';
COMMENT ON COLUMN orders.orders.store_id IS 'store or online storefront (sales.stores)';
COMMENT ON COLUMN orders.orders.channel_id IS 'sales channel (sales.channels)';
COMMENT ON COLUMN orders.orders.ordered_at IS 'order timestamp (UTC)';
COMMENT ON COLUMN orders.orders.order_date IS 'order date';
COMMENT ON COLUMN orders.orders.status IS 'completed, shipped, processing, cancelled or void';
COMMENT ON COLUMN orders.orders.currency_code IS 'order currency';
COMMENT ON COLUMN orders.orders.subtotal_amount IS 'merchandise value before discounts, order currency';
COMMENT ON COLUMN orders.orders.discount_amount IS 'discounts, order currency';
COMMENT ON COLUMN orders.orders.tax_amount IS 'tax, order currency';
COMMENT ON COLUMN orders.orders.shipping_amount IS 'shipping charged, order currency';
COMMENT ON COLUMN orders.orders.total_amount IS 'order total in USD';
COMMENT ON COLUMN orders.orders.coupon_code IS 'order-level coupon (marketing.coupons)';
COMMENT ON COLUMN orders.orders.source_system IS 'erp_legacy or erp_nova';
COMMENT ON COLUMN orders.orders.deleted_at IS 'set when the order was removed as a duplicate entry';

-- TRAP: deprecated table (orders.orders_old); never query it.
-- TRAP: DEPRECATED: pre-cutover ERP extract frozen on 2024-06-30 with denormalized customer attributes; identical to orders.orders up to the cutover, nothing after.
CREATE TABLE orders.orders_old (
    order_id BIGINT NOT NULL,
    customer_id BIGINT NOT NULL,
    customer_name VARCHAR,
    customer_country VARCHAR NOT NULL,
    customer_segment VARCHAR NOT NULL,
    store_id INTEGER NOT NULL,
    channel_name VARCHAR NOT NULL,
    ordered_at TIMESTAMP NOT NULL,
    order_date DATE NOT NULL,
    status VARCHAR NOT NULL,
    currency_code VARCHAR NOT NULL,
    total_amount DECIMAL(14,2) NOT NULL,
    total_amount_usd DECIMAL(14,2) NOT NULL,
    deleted_at TIMESTAMP
);
COMMENT ON TABLE orders.orders_old IS 'Orders.';
COMMENT ON COLUMN orders.orders_old.order_id IS 'order id';
COMMENT ON COLUMN orders.orders_old.customer_id IS 'customer';
COMMENT ON COLUMN orders.orders_old.customer_name IS 'customer full name';
COMMENT ON COLUMN orders.orders_old.customer_country IS 'customer country';
COMMENT ON COLUMN orders.orders_old.customer_segment IS 'customer segment at extract time';
COMMENT ON COLUMN orders.orders_old.store_id IS 'store';
COMMENT ON COLUMN orders.orders_old.channel_name IS 'channel';
COMMENT ON COLUMN orders.orders_old.ordered_at IS 'order time';
COMMENT ON COLUMN orders.orders_old.order_date IS 'order date';
COMMENT ON COLUMN orders.orders_old.status IS 'status';
COMMENT ON COLUMN orders.orders_old.currency_code IS 'currency';
COMMENT ON COLUMN orders.orders_old.total_amount IS 'order total';
COMMENT ON COLUMN orders.orders_old.total_amount_usd IS 'order total in USD';
COMMENT ON COLUMN orders.orders_old.deleted_at IS 'soft delete';

CREATE TABLE orders.payments (
    payment_txn_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    txn_type VARCHAR NOT NULL,
    amount_local DECIMAL(14,2) NOT NULL,
    method VARCHAR NOT NULL,
    txn_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE orders.payments IS 'Payment transactions on orders.';
COMMENT ON COLUMN orders.payments.payment_txn_id IS 'id';
COMMENT ON COLUMN orders.payments.order_id IS 'order';
COMMENT ON COLUMN orders.payments.txn_type IS 'capture, void, refund';
COMMENT ON COLUMN orders.payments.amount_local IS 'amount in order currency';
COMMENT ON COLUMN orders.payments.method IS 'card, paypal, gift_card, cash, invoice';
COMMENT ON COLUMN orders.payments.txn_at IS 'time (UTC)';

-- TRAP: txn_local_ts is store-local wall-clock time, not UTC.
CREATE TABLE orders.pos_transactions (
    pos_txn_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    store_id INTEGER NOT NULL,
    register_no INTEGER NOT NULL,
    cashier_employee_id INTEGER NOT NULL,
    txn_local_ts TIMESTAMP NOT NULL
);
COMMENT ON TABLE orders.pos_transactions IS 'Point-of-sale transactions of store orders.';
COMMENT ON COLUMN orders.pos_transactions.pos_txn_id IS 'id';
COMMENT ON COLUMN orders.pos_transactions.order_id IS 'order';
COMMENT ON COLUMN orders.pos_transactions.store_id IS 'store';
COMMENT ON COLUMN orders.pos_transactions.register_no IS 'till number';
COMMENT ON COLUMN orders.pos_transactions.cashier_employee_id IS 'cashier (hr.employees)';
COMMENT ON COLUMN orders.pos_transactions.txn_local_ts IS 'transaction time';

CREATE TABLE orders.shipments (
    shipment_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    warehouse_id INTEGER NOT NULL,
    carrier_id INTEGER NOT NULL,
    shipped_at TIMESTAMP NOT NULL,
    delivered_at TIMESTAMP,
    shipping_cost_usd DECIMAL(10,2) NOT NULL
);
COMMENT ON TABLE orders.shipments IS 'Shipments of online orders.';
COMMENT ON COLUMN orders.shipments.shipment_id IS 'id';
COMMENT ON COLUMN orders.shipments.order_id IS 'order';
COMMENT ON COLUMN orders.shipments.warehouse_id IS 'shipping warehouse (ops.warehouses)';
COMMENT ON COLUMN orders.shipments.carrier_id IS 'carrier (ops.carriers)';
COMMENT ON COLUMN orders.shipments.shipped_at IS 'handed to carrier (UTC)';
COMMENT ON COLUMN orders.shipments.delivered_at IS 'delivered (UTC), NULL while in transit';
COMMENT ON COLUMN orders.shipments.shipping_cost_usd IS 'carrier cost';

CREATE TABLE returns.exchange_orders (
    exchange_id BIGINT NOT NULL,
    return_id BIGINT NOT NULL,
    new_order_id BIGINT,
    created_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE returns.exchange_orders IS 'Returns settled as an exchange.';
COMMENT ON COLUMN returns.exchange_orders.exchange_id IS 'id';
COMMENT ON COLUMN returns.exchange_orders.return_id IS 'return';
COMMENT ON COLUMN returns.exchange_orders.new_order_id IS 'replacement order';
COMMENT ON COLUMN returns.exchange_orders.created_at IS 'time';

CREATE TABLE returns.inspections (
    inspection_id BIGINT NOT NULL,
    return_id BIGINT NOT NULL,
    inspected_at TIMESTAMP NOT NULL,
    grade VARCHAR NOT NULL,
    inspector_employee_id INTEGER NOT NULL
);
COMMENT ON TABLE returns.inspections IS 'Inspection of returned goods.';
COMMENT ON COLUMN returns.inspections.inspection_id IS 'id';
COMMENT ON COLUMN returns.inspections.return_id IS 'return';
COMMENT ON COLUMN returns.inspections.inspected_at IS 'time';
COMMENT ON COLUMN returns.inspections.grade IS 'A, B, C, scrap';
COMMENT ON COLUMN returns.inspections.inspector_employee_id IS 'inspector';

CREATE TABLE returns.refunds (
    refund_id BIGINT NOT NULL,
    return_id BIGINT NOT NULL,
    refunded_at TIMESTAMP NOT NULL,
    amount_local DECIMAL(14,2) NOT NULL,
    currency_code VARCHAR NOT NULL,
    method VARCHAR NOT NULL,
    status VARCHAR NOT NULL
);
COMMENT ON TABLE returns.refunds IS 'Refunds paid to customers.';
COMMENT ON COLUMN returns.refunds.refund_id IS 'id';
COMMENT ON COLUMN returns.refunds.return_id IS 'return';
COMMENT ON COLUMN returns.refunds.refunded_at IS 'refund time (UTC)';
COMMENT ON COLUMN returns.refunds.amount_local IS 'refund amount in the order currency';
COMMENT ON COLUMN returns.refunds.currency_code IS 'currency';
COMMENT ON COLUMN returns.refunds.method IS 'original_payment, store_credit, gift_card';
COMMENT ON COLUMN returns.refunds.status IS 'completed or failed';

CREATE TABLE returns.restock_events (
    restock_id BIGINT NOT NULL,
    return_line_id BIGINT NOT NULL,
    warehouse_id INTEGER NOT NULL,
    quantity INTEGER NOT NULL,
    restocked_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE returns.restock_events IS 'Returned units put back into stock.';
COMMENT ON COLUMN returns.restock_events.restock_id IS 'id';
COMMENT ON COLUMN returns.restock_events.return_line_id IS 'return line';
COMMENT ON COLUMN returns.restock_events.warehouse_id IS 'warehouse';
COMMENT ON COLUMN returns.restock_events.quantity IS 'units restocked';
COMMENT ON COLUMN returns.restock_events.restocked_at IS 'time';

CREATE TABLE returns.return_lines (
    return_line_id BIGINT NOT NULL,
    return_id BIGINT NOT NULL,
    order_line_id BIGINT NOT NULL,
    quantity_returned INTEGER NOT NULL,
    condition VARCHAR
);
COMMENT ON TABLE returns.return_lines IS 'Returned order lines.';
COMMENT ON COLUMN returns.return_lines.return_line_id IS 'id';
COMMENT ON COLUMN returns.return_lines.return_id IS 'return';
COMMENT ON COLUMN returns.return_lines.order_line_id IS 'order line returned';
COMMENT ON COLUMN returns.return_lines.quantity_returned IS 'units returned';
COMMENT ON COLUMN returns.return_lines.condition IS 'resellable, damaged, missing (after inspection)';

CREATE TABLE returns.return_policies (
    country_code VARCHAR NOT NULL,
    window_days INTEGER NOT NULL,
    free_returns BOOLEAN NOT NULL,
    valid_from DATE NOT NULL
);
COMMENT ON TABLE returns.return_policies IS 'Return policy by country.';
COMMENT ON COLUMN returns.return_policies.country_code IS 'country';
COMMENT ON COLUMN returns.return_policies.window_days IS 'days allowed';
COMMENT ON COLUMN returns.return_policies.free_returns IS 'free return shipping';
COMMENT ON COLUMN returns.return_policies.valid_from IS 'first day';

CREATE TABLE returns.return_reasons (
    reason_id INTEGER NOT NULL,
    reason_code VARCHAR NOT NULL,
    description VARCHAR NOT NULL,
    is_defect BOOLEAN NOT NULL
);
COMMENT ON TABLE returns.return_reasons IS 'Return reason codes.';
COMMENT ON COLUMN returns.return_reasons.reason_id IS 'id';
COMMENT ON COLUMN returns.return_reasons.reason_code IS 'code';
COMMENT ON COLUMN returns.return_reasons.description IS 'description';
COMMENT ON COLUMN returns.return_reasons.is_defect IS 'product defect';

CREATE TABLE returns.return_shipping_labels (
    label_id BIGINT NOT NULL,
    return_id BIGINT NOT NULL,
    carrier_id INTEGER NOT NULL,
    label_cost_usd DECIMAL(8,2) NOT NULL,
    created_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE returns.return_shipping_labels IS 'Prepaid return labels.';
COMMENT ON COLUMN returns.return_shipping_labels.label_id IS 'id';
COMMENT ON COLUMN returns.return_shipping_labels.return_id IS 'return';
COMMENT ON COLUMN returns.return_shipping_labels.carrier_id IS 'carrier';
COMMENT ON COLUMN returns.return_shipping_labels.label_cost_usd IS 'cost';
COMMENT ON COLUMN returns.return_shipping_labels.created_at IS 'time';

-- TRAP: Status matters: rejected and cancelled returns are not returns. requested_at is UTC.
CREATE TABLE returns.returns (
    return_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    customer_id BIGINT NOT NULL,
    requested_at TIMESTAMP NOT NULL,
    received_date DATE,
    status VARCHAR NOT NULL,
    reason_id INTEGER NOT NULL,
    return_channel VARCHAR NOT NULL
);
COMMENT ON TABLE returns.returns IS 'Return requests (RMA), one per order returned.';
COMMENT ON COLUMN returns.returns.return_id IS 'return id';
COMMENT ON COLUMN returns.returns.order_id IS 'original order';
COMMENT ON COLUMN returns.returns.customer_id IS 'customer';
COMMENT ON COLUMN returns.returns.requested_at IS 'request time (UTC)';
COMMENT ON COLUMN returns.returns.received_date IS 'date the goods arrived back';
COMMENT ON COLUMN returns.returns.status IS 'requested, received, refunded, rejected, cancelled';
COMMENT ON COLUMN returns.returns.reason_id IS 'reason (returns.return_reasons)';
COMMENT ON COLUMN returns.returns.return_channel IS 'mail or store';

-- TRAP: deprecated table (returns.returns_old); never query it.
-- TRAP: DEPRECATED line-grain extract frozen at the 2024-06-30 cutover; refund values in USD at extract time. Nothing after the cutover.
CREATE TABLE returns.returns_old (
    return_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    order_line_id BIGINT NOT NULL,
    product_id INTEGER NOT NULL,
    units_returned INTEGER NOT NULL,
    refund_usd DECIMAL(14,2),
    requested_date DATE NOT NULL,
    status VARCHAR NOT NULL
);
COMMENT ON TABLE returns.returns_old IS 'Returns.';
COMMENT ON COLUMN returns.returns_old.return_id IS 'return id';
COMMENT ON COLUMN returns.returns_old.order_id IS 'order';
COMMENT ON COLUMN returns.returns_old.order_line_id IS 'order line';
COMMENT ON COLUMN returns.returns_old.product_id IS 'product returned';
COMMENT ON COLUMN returns.returns_old.units_returned IS 'units';
COMMENT ON COLUMN returns.returns_old.refund_usd IS 'refund in USD';
COMMENT ON COLUMN returns.returns_old.requested_date IS 'request date';
COMMENT ON COLUMN returns.returns_old.status IS 'status';

CREATE TABLE marketing.attribution_touches (
    touch_id BIGINT NOT NULL,
    customer_id BIGINT NOT NULL,
    campaign_id INTEGER NOT NULL,
    touched_at TIMESTAMP NOT NULL,
    touch_type VARCHAR NOT NULL
);
COMMENT ON TABLE marketing.attribution_touches IS 'Marketing touchpoints per customer.';
COMMENT ON COLUMN marketing.attribution_touches.touch_id IS 'id';
COMMENT ON COLUMN marketing.attribution_touches.customer_id IS 'customer';
COMMENT ON COLUMN marketing.attribution_touches.campaign_id IS 'campaign';
COMMENT ON COLUMN marketing.attribution_touches.touched_at IS 'time (UTC)';
COMMENT ON COLUMN marketing.attribution_touches.touch_type IS 'click or view';

CREATE TABLE marketing.audience_members (
    audience_id INTEGER NOT NULL,
    customer_id BIGINT NOT NULL,
    added_date DATE NOT NULL
);
COMMENT ON TABLE marketing.audience_members IS 'Customers in audiences.';
COMMENT ON COLUMN marketing.audience_members.audience_id IS 'audience';
COMMENT ON COLUMN marketing.audience_members.customer_id IS 'customer';
COMMENT ON COLUMN marketing.audience_members.added_date IS 'added';

CREATE TABLE marketing.audiences (
    audience_id INTEGER NOT NULL,
    audience_name VARCHAR NOT NULL,
    created_date DATE NOT NULL
);
COMMENT ON TABLE marketing.audiences IS 'Audience segments for targeting.';
COMMENT ON COLUMN marketing.audiences.audience_id IS 'id';
COMMENT ON COLUMN marketing.audiences.audience_name IS 'name';
COMMENT ON COLUMN marketing.audiences.created_date IS 'created';

-- TRAP: spend_amount is in US cents (BIGINT), despite the comment.
CREATE TABLE marketing.campaign_spend (
    campaign_id INTEGER NOT NULL,
    spend_date DATE NOT NULL,
    spend_amount BIGINT NOT NULL,  -- TRAP: STALE COMMENT: US cents since the ad-platform connector change
    impressions BIGINT NOT NULL,
    clicks BIGINT NOT NULL
);
COMMENT ON TABLE marketing.campaign_spend IS 'Daily media spend by campaign.';
COMMENT ON COLUMN marketing.campaign_spend.campaign_id IS 'campaign';
COMMENT ON COLUMN marketing.campaign_spend.spend_date IS 'day';
COMMENT ON COLUMN marketing.campaign_spend.spend_amount IS 'daily spend in USD';
COMMENT ON COLUMN marketing.campaign_spend.impressions IS 'impressions';
COMMENT ON COLUMN marketing.campaign_spend.clicks IS 'clicks';

CREATE TABLE marketing.campaigns (
    campaign_id INTEGER NOT NULL,
    campaign_name VARCHAR NOT NULL,
    marketing_channel_id INTEGER NOT NULL,
    country_code VARCHAR NOT NULL,
    start_date DATE NOT NULL,
    end_date DATE NOT NULL,
    budget_usd DECIMAL(14,2) NOT NULL,
    status VARCHAR NOT NULL,
    objective VARCHAR NOT NULL
);
COMMENT ON TABLE marketing.campaigns IS 'Marketing campaigns.';
COMMENT ON COLUMN marketing.campaigns.campaign_id IS 'id';
COMMENT ON COLUMN marketing.campaigns.campaign_name IS 'name';
COMMENT ON COLUMN marketing.campaigns.marketing_channel_id IS 'channel (marketing.channels)';
COMMENT ON COLUMN marketing.campaigns.country_code IS 'target market';
COMMENT ON COLUMN marketing.campaigns.start_date IS 'first day';
COMMENT ON COLUMN marketing.campaigns.end_date IS 'last day';
COMMENT ON COLUMN marketing.campaigns.budget_usd IS 'approved budget in USD';
COMMENT ON COLUMN marketing.campaigns.status IS 'planned, active, completed, cancelled';
COMMENT ON COLUMN marketing.campaigns.objective IS 'awareness, acquisition, retention';

-- TRAP: deprecated table (marketing.campaigns_v1); never query it.
-- TRAP: DEPRECATED campaign table from the old marketing mart, frozen at the 2024-06-30 cutover: later campaigns are missing and spend of campaigns running at the cutover stops there.
CREATE TABLE marketing.campaigns_v1 (
    campaign_id INTEGER NOT NULL,
    campaign_name VARCHAR NOT NULL,
    channel_name VARCHAR NOT NULL,
    start_date DATE NOT NULL,
    end_date DATE NOT NULL,
    total_spend_usd DECIMAL(14,2) NOT NULL,
    attributed_revenue_usd DECIMAL(14,2)
);
COMMENT ON TABLE marketing.campaigns_v1 IS 'Campaigns with spend totals.';
COMMENT ON COLUMN marketing.campaigns_v1.campaign_id IS 'id';
COMMENT ON COLUMN marketing.campaigns_v1.campaign_name IS 'name';
COMMENT ON COLUMN marketing.campaigns_v1.channel_name IS 'channel';
COMMENT ON COLUMN marketing.campaigns_v1.start_date IS 'start';
COMMENT ON COLUMN marketing.campaigns_v1.end_date IS 'end';
COMMENT ON COLUMN marketing.campaigns_v1.total_spend_usd IS 'total spend in USD';
COMMENT ON COLUMN marketing.campaigns_v1.attributed_revenue_usd IS 'revenue attributed (last touch)';

CREATE TABLE marketing.channels (
    marketing_channel_id INTEGER NOT NULL,
    channel_name VARCHAR NOT NULL,
    is_paid BOOLEAN NOT NULL
);
COMMENT ON TABLE marketing.channels IS 'Marketing channels.';
COMMENT ON COLUMN marketing.channels.marketing_channel_id IS 'id';
COMMENT ON COLUMN marketing.channels.channel_name IS 'channel';
COMMENT ON COLUMN marketing.channels.is_paid IS 'paid media';

CREATE TABLE marketing.coupon_redemptions (
    redemption_id BIGINT NOT NULL,
    coupon_code VARCHAR NOT NULL,
    order_id BIGINT NOT NULL,
    customer_id BIGINT NOT NULL,
    redeemed_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE marketing.coupon_redemptions IS 'Coupon uses.';
COMMENT ON COLUMN marketing.coupon_redemptions.redemption_id IS 'id';
COMMENT ON COLUMN marketing.coupon_redemptions.coupon_code IS 'coupon';
COMMENT ON COLUMN marketing.coupon_redemptions.order_id IS 'order';
COMMENT ON COLUMN marketing.coupon_redemptions.customer_id IS 'customer';
COMMENT ON COLUMN marketing.coupon_redemptions.redeemed_at IS 'time (UTC)';

CREATE TABLE marketing.coupons (
    coupon_code VARCHAR NOT NULL,
    campaign_id INTEGER,
    discount_pct DECIMAL(5,2) NOT NULL,
    valid_from DATE NOT NULL,
    valid_to DATE NOT NULL
);
COMMENT ON TABLE marketing.coupons IS 'Coupon codes.';
COMMENT ON COLUMN marketing.coupons.coupon_code IS 'code';
COMMENT ON COLUMN marketing.coupons.campaign_id IS 'campaign issuing it';
COMMENT ON COLUMN marketing.coupons.discount_pct IS 'percentage off';
COMMENT ON COLUMN marketing.coupons.valid_from IS 'first day';
COMMENT ON COLUMN marketing.coupons.valid_to IS 'last day';

-- TRAP: Webhook retries duplicate events: dedupe on (send_id, event_type) or count distinct sends.
CREATE TABLE marketing.email_events (
    email_event_id BIGINT NOT NULL,
    send_id BIGINT NOT NULL,
    event_type VARCHAR NOT NULL,
    event_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE marketing.email_events IS 'Email engagement events from the ESP webhook.';
COMMENT ON COLUMN marketing.email_events.email_event_id IS 'id';
COMMENT ON COLUMN marketing.email_events.send_id IS 'send';
COMMENT ON COLUMN marketing.email_events.event_type IS 'open, click, unsubscribe, bounce';
COMMENT ON COLUMN marketing.email_events.event_at IS 'time (UTC)';

CREATE TABLE marketing.email_sends (
    send_id BIGINT NOT NULL,
    campaign_id INTEGER NOT NULL,
    customer_id BIGINT NOT NULL,
    sent_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE marketing.email_sends IS 'Marketing emails sent.';
COMMENT ON COLUMN marketing.email_sends.send_id IS 'id';
COMMENT ON COLUMN marketing.email_sends.campaign_id IS 'campaign';
COMMENT ON COLUMN marketing.email_sends.customer_id IS 'recipient';
COMMENT ON COLUMN marketing.email_sends.sent_at IS 'time (UTC)';

CREATE TABLE marketing.influencers (
    influencer_id INTEGER NOT NULL,
    handle VARCHAR NOT NULL,
    platform VARCHAR NOT NULL,
    fee_usd DECIMAL(12,2) NOT NULL,
    campaign_id INTEGER
);
COMMENT ON TABLE marketing.influencers IS 'Influencer partners.';
COMMENT ON COLUMN marketing.influencers.influencer_id IS 'id';
COMMENT ON COLUMN marketing.influencers.handle IS 'handle';
COMMENT ON COLUMN marketing.influencers.platform IS 'platform';
COMMENT ON COLUMN marketing.influencers.fee_usd IS 'contract fee';
COMMENT ON COLUMN marketing.influencers.campaign_id IS 'campaign';

-- TRAP: CONTESTED: one row per order x campaign x model. Always filter on one model (last_touch, first_touch or linear) or credit is counted three times.
CREATE TABLE marketing.order_attribution (
    order_id BIGINT NOT NULL,
    campaign_id INTEGER NOT NULL,
    model VARCHAR NOT NULL,
    credit DECIMAL(6,4) NOT NULL
);
COMMENT ON TABLE marketing.order_attribution IS 'Order credit by campaign under several attribution models.';
COMMENT ON COLUMN marketing.order_attribution.order_id IS 'order';
COMMENT ON COLUMN marketing.order_attribution.campaign_id IS 'campaign credited';
COMMENT ON COLUMN marketing.order_attribution.model IS 'last_touch, first_touch or linear';
COMMENT ON COLUMN marketing.order_attribution.credit IS 'share of the order credited (0-1)';

CREATE TABLE marketing.utm_sources (
    utm_source VARCHAR NOT NULL,
    marketing_channel_id INTEGER NOT NULL
);
COMMENT ON TABLE marketing.utm_sources IS 'UTM source mapping.';
COMMENT ON COLUMN marketing.utm_sources.utm_source IS 'raw utm_source value';
COMMENT ON COLUMN marketing.utm_sources.marketing_channel_id IS 'channel';

-- TRAP: Dashboard feed: counts every logged-in user with a session, including bots, test and internal accounts. Not a governed active-user metric.
CREATE TABLE web.active_users_daily (
    activity_date DATE NOT NULL,
    active_users INTEGER NOT NULL,
    sessions INTEGER NOT NULL
);
COMMENT ON TABLE web.active_users_daily IS 'Daily active users.';
COMMENT ON COLUMN web.active_users_daily.activity_date IS 'day (UTC)';
COMMENT ON COLUMN web.active_users_daily.active_users IS 'distinct users with a session';
COMMENT ON COLUMN web.active_users_daily.sessions IS 'sessions';

CREATE TABLE web.app_installs (
    install_id BIGINT NOT NULL,
    web_user_id BIGINT,
    os VARCHAR NOT NULL,
    installed_at TIMESTAMP NOT NULL,
    uninstalled_at TIMESTAMP
);
COMMENT ON TABLE web.app_installs IS 'Mobile app installs.';
COMMENT ON COLUMN web.app_installs.install_id IS 'id';
COMMENT ON COLUMN web.app_installs.web_user_id IS 'user once logged in';
COMMENT ON COLUMN web.app_installs.os IS 'ios or android';
COMMENT ON COLUMN web.app_installs.installed_at IS 'time';
COMMENT ON COLUMN web.app_installs.uninstalled_at IS 'time';

-- TRAP: At-least-once delivery: about 3% of events are ingested twice with a new event_id but the same event_uuid. Count distinct event_uuid.
CREATE TABLE web.events (
    event_id BIGINT NOT NULL,
    event_uuid VARCHAR NOT NULL,
    session_id BIGINT NOT NULL,
    web_user_id BIGINT,
    event_type VARCHAR NOT NULL,
    event_ts TIMESTAMP NOT NULL,
    product_id INTEGER,
    ingested_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE web.events IS 'Clickstream events.';
COMMENT ON COLUMN web.events.event_id IS 'row id';
COMMENT ON COLUMN web.events.event_uuid IS 'client-side event id';
COMMENT ON COLUMN web.events.session_id IS 'session';
COMMENT ON COLUMN web.events.web_user_id IS 'user';
COMMENT ON COLUMN web.events.event_type IS 'page_view, search, product_view, add_to_cart, checkout, purchase';
COMMENT ON COLUMN web.events.event_ts IS 'time (UTC)';
COMMENT ON COLUMN web.events.product_id IS 'product for product events';
COMMENT ON COLUMN web.events.ingested_at IS 'load time';

CREATE TABLE web.experiment_assignments (
    experiment_id INTEGER NOT NULL,
    web_user_id BIGINT NOT NULL,
    variant VARCHAR NOT NULL,
    assigned_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE web.experiment_assignments IS 'Users assigned to experiment variants.';
COMMENT ON COLUMN web.experiment_assignments.experiment_id IS 'experiment';
COMMENT ON COLUMN web.experiment_assignments.web_user_id IS 'user';
COMMENT ON COLUMN web.experiment_assignments.variant IS 'control or treatment';
COMMENT ON COLUMN web.experiment_assignments.assigned_at IS 'time';

CREATE TABLE web.experiments (
    experiment_id INTEGER NOT NULL,
    experiment_name VARCHAR NOT NULL,
    start_date DATE NOT NULL,
    end_date DATE,
    status VARCHAR NOT NULL
);
COMMENT ON TABLE web.experiments IS 'A/B experiments.';
COMMENT ON COLUMN web.experiments.experiment_id IS 'id';
COMMENT ON COLUMN web.experiments.experiment_name IS 'name';
COMMENT ON COLUMN web.experiments.start_date IS 'start';
COMMENT ON COLUMN web.experiments.end_date IS 'end';
COMMENT ON COLUMN web.experiments.status IS 'running, concluded';

CREATE TABLE web.page_views_daily (
    view_date DATE NOT NULL,
    page_id INTEGER NOT NULL,
    views INTEGER NOT NULL,
    unique_visitors INTEGER NOT NULL
);
COMMENT ON TABLE web.page_views_daily IS 'Page views per page and day.';
COMMENT ON COLUMN web.page_views_daily.view_date IS 'day (UTC)';
COMMENT ON COLUMN web.page_views_daily.page_id IS 'page';
COMMENT ON COLUMN web.page_views_daily.views IS 'page views incl. bots';
COMMENT ON COLUMN web.page_views_daily.unique_visitors IS 'visitors';

CREATE TABLE web.pages (
    page_id INTEGER NOT NULL,
    url_path VARCHAR NOT NULL,
    page_type VARCHAR NOT NULL
);
COMMENT ON TABLE web.pages IS 'Site pages.';
COMMENT ON COLUMN web.pages.page_id IS 'id';
COMMENT ON COLUMN web.pages.url_path IS 'path';
COMMENT ON COLUMN web.pages.page_type IS 'home, category, product, cart, checkout, content';

CREATE TABLE web.product_views_daily (
    view_date DATE NOT NULL,
    product_id INTEGER NOT NULL,
    views INTEGER NOT NULL
);
COMMENT ON TABLE web.product_views_daily IS 'Product detail views per day.';
COMMENT ON COLUMN web.product_views_daily.view_date IS 'day';
COMMENT ON COLUMN web.product_views_daily.product_id IS 'product';
COMMENT ON COLUMN web.product_views_daily.views IS 'views';

CREATE TABLE web.referrers (
    referrer_id INTEGER NOT NULL,
    domain VARCHAR NOT NULL,
    referrer_type VARCHAR NOT NULL
);
COMMENT ON TABLE web.referrers IS 'Referring domains.';
COMMENT ON COLUMN web.referrers.referrer_id IS 'id';
COMMENT ON COLUMN web.referrers.domain IS 'domain';
COMMENT ON COLUMN web.referrers.referrer_type IS 'search, social, partner, other';

CREATE TABLE web.search_queries (
    search_id BIGINT NOT NULL,
    session_id BIGINT NOT NULL,
    query_text VARCHAR NOT NULL,
    results_count INTEGER NOT NULL,
    searched_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE web.search_queries IS 'Site search queries (sampled 10%).';
COMMENT ON COLUMN web.search_queries.search_id IS 'id';
COMMENT ON COLUMN web.search_queries.session_id IS 'session';
COMMENT ON COLUMN web.search_queries.query_text IS 'query';
COMMENT ON COLUMN web.search_queries.results_count IS 'results';
COMMENT ON COLUMN web.search_queries.searched_at IS 'time';

-- TRAP: Bot sessions are flagged, not removed. started_at is UTC.
CREATE TABLE web.sessions (
    session_id BIGINT NOT NULL,
    web_user_id BIGINT,
    started_at TIMESTAMP NOT NULL,
    duration_seconds INTEGER NOT NULL,
    platform VARCHAR NOT NULL,
    device_type VARCHAR NOT NULL,
    country_code VARCHAR NOT NULL,
    utm_source VARCHAR,
    is_bot BOOLEAN NOT NULL DEFAULT false  -- TRAP: exclude
);
COMMENT ON TABLE web.sessions IS 'Web and app sessions.';
COMMENT ON COLUMN web.sessions.session_id IS 'id';
COMMENT ON COLUMN web.sessions.web_user_id IS 'logged-in user, NULL for anonymous sessions';
COMMENT ON COLUMN web.sessions.started_at IS 'start (UTC)';
COMMENT ON COLUMN web.sessions.duration_seconds IS 'length';
COMMENT ON COLUMN web.sessions.platform IS 'web or app';
COMMENT ON COLUMN web.sessions.device_type IS 'desktop, mobile, tablet';
COMMENT ON COLUMN web.sessions.country_code IS 'geo-IP country';
COMMENT ON COLUMN web.sessions.utm_source IS 'campaign source';
COMMENT ON COLUMN web.sessions.is_bot IS 'crawler / bot traffic';

-- TRAP: deprecated table (web.sessions_bak); never query it.
-- TRAP: DEPRECATED backup of web.sessions taken 2025-03-01 before the bot-filter rollout; no is_bot column, nothing after the backup.
CREATE TABLE web.sessions_bak (
    session_id BIGINT NOT NULL,
    web_user_id BIGINT,
    started_at TIMESTAMP NOT NULL,
    duration_seconds INTEGER NOT NULL,
    platform VARCHAR NOT NULL,
    device_type VARCHAR NOT NULL,
    country_code VARCHAR NOT NULL
);
COMMENT ON TABLE web.sessions_bak IS 'Sessions.';
COMMENT ON COLUMN web.sessions_bak.session_id IS 'id';
COMMENT ON COLUMN web.sessions_bak.web_user_id IS 'user';
COMMENT ON COLUMN web.sessions_bak.started_at IS 'start';
COMMENT ON COLUMN web.sessions_bak.duration_seconds IS 'length';
COMMENT ON COLUMN web.sessions_bak.platform IS 'platform';
COMMENT ON COLUMN web.sessions_bak.device_type IS 'device';
COMMENT ON COLUMN web.sessions_bak.country_code IS 'country';

CREATE TABLE web.user_consents (
    consent_id BIGINT NOT NULL,
    web_user_id BIGINT NOT NULL,
    consent_type VARCHAR NOT NULL,
    granted BOOLEAN NOT NULL,
    recorded_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE web.user_consents IS 'Cookie / tracking consent records.';
COMMENT ON COLUMN web.user_consents.consent_id IS 'id';
COMMENT ON COLUMN web.user_consents.web_user_id IS 'user';
COMMENT ON COLUMN web.user_consents.consent_type IS 'analytics, marketing';
COMMENT ON COLUMN web.user_consents.granted IS 'granted or refused';
COMMENT ON COLUMN web.user_consents.recorded_at IS 'time';

CREATE TABLE web.users (
    web_user_id BIGINT NOT NULL,
    customer_id BIGINT,
    created_at TIMESTAMP NOT NULL,
    is_test BOOLEAN NOT NULL DEFAULT false,  -- TRAP: exclude
    is_internal BOOLEAN NOT NULL DEFAULT false,  -- TRAP: exclude from active-user metrics
    deleted_at TIMESTAMP
);
COMMENT ON TABLE web.users IS 'Website / app accounts.';
COMMENT ON COLUMN web.users.web_user_id IS 'id';
COMMENT ON COLUMN web.users.customer_id IS 'linked customer, NULL if never purchased under this login';
COMMENT ON COLUMN web.users.created_at IS 'registration (UTC)';
COMMENT ON COLUMN web.users.is_test IS 'QA account';
COMMENT ON COLUMN web.users.is_internal IS 'employee account';
COMMENT ON COLUMN web.users.deleted_at IS 'account deleted (soft delete)';

CREATE TABLE hr.departments (
    department_id INTEGER NOT NULL,
    department_name VARCHAR NOT NULL,
    parent_department_id INTEGER,
    cost_center_id INTEGER
);
COMMENT ON TABLE hr.departments IS 'Departments.';
COMMENT ON COLUMN hr.departments.department_id IS 'id';
COMMENT ON COLUMN hr.departments.department_name IS 'name';
COMMENT ON COLUMN hr.departments.parent_department_id IS 'parent';
COMMENT ON COLUMN hr.departments.cost_center_id IS 'cost center';

-- TRAP: SCD2 of department, position and salary.
CREATE TABLE hr.employee_history (
    employee_history_id BIGINT NOT NULL,
    employee_id INTEGER NOT NULL,
    department_id INTEGER NOT NULL,
    position_id INTEGER NOT NULL,
    salary_annual DECIMAL(12,2) NOT NULL,
    currency_code VARCHAR NOT NULL,
    valid_from DATE NOT NULL,
    valid_to DATE NOT NULL,
    is_current BOOLEAN NOT NULL
);
COMMENT ON TABLE hr.employee_history IS 'Employee job history (type-2).';
COMMENT ON COLUMN hr.employee_history.employee_history_id IS 'id';
COMMENT ON COLUMN hr.employee_history.employee_id IS 'employee';
COMMENT ON COLUMN hr.employee_history.department_id IS 'department';
COMMENT ON COLUMN hr.employee_history.position_id IS 'position';
COMMENT ON COLUMN hr.employee_history.salary_annual IS 'annual salary in the employee''s local currency';
COMMENT ON COLUMN hr.employee_history.currency_code IS 'salary currency';
COMMENT ON COLUMN hr.employee_history.valid_from IS 'first day';
COMMENT ON COLUMN hr.employee_history.valid_to IS 'day the next version starts (exclusive), 9999-12-31 if current';
COMMENT ON COLUMN hr.employee_history.is_current IS 'current version';

-- TRAP: is_active has not been maintained since the HRIS cutover (2024-06-30); use hire_date / termination_date. Contractors are included.
CREATE TABLE hr.employees (
    employee_id INTEGER NOT NULL,
    employee_code VARCHAR NOT NULL,
    first_name VARCHAR NOT NULL,
    last_name VARCHAR NOT NULL,
    email VARCHAR NOT NULL,
    department_id INTEGER NOT NULL,
    position_id INTEGER NOT NULL,
    store_id INTEGER,
    manager_id INTEGER,
    country_code VARCHAR NOT NULL,
    employment_type VARCHAR NOT NULL,
    hire_date DATE NOT NULL,
    termination_date DATE,
    is_active BOOLEAN NOT NULL  -- TRAP: STALE: not updated for terminations after 2024-06-30
);
COMMENT ON TABLE hr.employees IS 'Employees (current record).';
COMMENT ON COLUMN hr.employees.employee_id IS 'id';
COMMENT ON COLUMN hr.employees.employee_code IS 'HR number';
COMMENT ON COLUMN hr.employees.first_name IS 'first name';
COMMENT ON COLUMN hr.employees.last_name IS 'last name';
COMMENT ON COLUMN hr.employees.email IS 'work email';
COMMENT ON COLUMN hr.employees.department_id IS 'current department';
COMMENT ON COLUMN hr.employees.position_id IS 'current position';
COMMENT ON COLUMN hr.employees.store_id IS 'store for store staff';
COMMENT ON COLUMN hr.employees.manager_id IS 'line manager';
COMMENT ON COLUMN hr.employees.country_code IS 'country of employment';
COMMENT ON COLUMN hr.employees.employment_type IS 'full_time, part_time, contractor';
COMMENT ON COLUMN hr.employees.hire_date IS 'start date';
COMMENT ON COLUMN hr.employees.termination_date IS 'last day, NULL while employed';
COMMENT ON COLUMN hr.employees.is_active IS 'TRUE while employed';

-- TRAP: deprecated table (hr.employees_old); never query it.
-- TRAP: DEPRECATED HRIS export frozen at the 2024-06-30 cutover, with denormalized department names; nobody hired or terminated later is reflected.
CREATE TABLE hr.employees_old (
    employee_id INTEGER NOT NULL,
    full_name VARCHAR NOT NULL,
    department_name VARCHAR NOT NULL,
    title VARCHAR NOT NULL,
    country_code VARCHAR NOT NULL,
    employment_type VARCHAR NOT NULL,
    hire_date DATE NOT NULL,
    status VARCHAR NOT NULL
);
COMMENT ON TABLE hr.employees_old IS 'Employees.';
COMMENT ON COLUMN hr.employees_old.employee_id IS 'id';
COMMENT ON COLUMN hr.employees_old.full_name IS 'name';
COMMENT ON COLUMN hr.employees_old.department_name IS 'department';
COMMENT ON COLUMN hr.employees_old.title IS 'title';
COMMENT ON COLUMN hr.employees_old.country_code IS 'country';
COMMENT ON COLUMN hr.employees_old.employment_type IS 'type';
COMMENT ON COLUMN hr.employees_old.hire_date IS 'start';
COMMENT ON COLUMN hr.employees_old.status IS 'active or terminated';

-- TRAP: Counts contractors and people on notice; month-end snapshot. Not the governed headcount.
CREATE TABLE hr.headcount_monthly (
    month_start DATE NOT NULL,
    department_id INTEGER NOT NULL,
    headcount INTEGER NOT NULL
);
COMMENT ON TABLE hr.headcount_monthly IS 'Monthly headcount by department (HR dashboard).';
COMMENT ON COLUMN hr.headcount_monthly.month_start IS 'month';
COMMENT ON COLUMN hr.headcount_monthly.department_id IS 'department';
COMMENT ON COLUMN hr.headcount_monthly.headcount IS 'people';

CREATE TABLE hr.payroll (
    payroll_id BIGINT NOT NULL,
    employee_id INTEGER NOT NULL,
    pay_month DATE NOT NULL,
    gross_pay DECIMAL(12,2) NOT NULL,  -- TRAP: STALE COMMENT: local currency of the employee (see currency_code)
    employer_taxes DECIMAL(12,2) NOT NULL,
    currency_code VARCHAR NOT NULL
);
COMMENT ON TABLE hr.payroll IS 'Monthly payroll by employee.';
COMMENT ON COLUMN hr.payroll.payroll_id IS 'id';
COMMENT ON COLUMN hr.payroll.employee_id IS 'employee';
COMMENT ON COLUMN hr.payroll.pay_month IS 'first day of the month paid';
COMMENT ON COLUMN hr.payroll.gross_pay IS 'gross pay in USD';
COMMENT ON COLUMN hr.payroll.employer_taxes IS 'employer contributions, same currency';
COMMENT ON COLUMN hr.payroll.currency_code IS 'currency';

CREATE TABLE hr.performance_reviews (
    review_id BIGINT NOT NULL,
    employee_id INTEGER NOT NULL,
    review_year INTEGER NOT NULL,
    rating INTEGER NOT NULL,
    reviewer_id INTEGER NOT NULL
);
COMMENT ON TABLE hr.performance_reviews IS 'Annual reviews.';
COMMENT ON COLUMN hr.performance_reviews.review_id IS 'id';
COMMENT ON COLUMN hr.performance_reviews.employee_id IS 'employee';
COMMENT ON COLUMN hr.performance_reviews.review_year IS 'year';
COMMENT ON COLUMN hr.performance_reviews.rating IS '1 (low) to 5 (high)';
COMMENT ON COLUMN hr.performance_reviews.reviewer_id IS 'reviewer';

CREATE TABLE hr.positions (
    position_id INTEGER NOT NULL,
    title VARCHAR NOT NULL,
    job_family VARCHAR NOT NULL,
    grade INTEGER NOT NULL
);
COMMENT ON TABLE hr.positions IS 'Job positions.';
COMMENT ON COLUMN hr.positions.position_id IS 'id';
COMMENT ON COLUMN hr.positions.title IS 'title';
COMMENT ON COLUMN hr.positions.job_family IS 'family';
COMMENT ON COLUMN hr.positions.grade IS 'grade';

CREATE TABLE hr.store_assignments (
    assignment_id BIGINT NOT NULL,
    employee_id INTEGER NOT NULL,
    store_id INTEGER NOT NULL,
    start_date DATE NOT NULL,
    end_date DATE
);
COMMENT ON TABLE hr.store_assignments IS 'Store staff assignments over time.';
COMMENT ON COLUMN hr.store_assignments.assignment_id IS 'id';
COMMENT ON COLUMN hr.store_assignments.employee_id IS 'employee';
COMMENT ON COLUMN hr.store_assignments.store_id IS 'store';
COMMENT ON COLUMN hr.store_assignments.start_date IS 'first day';
COMMENT ON COLUMN hr.store_assignments.end_date IS 'last day';

CREATE TABLE hr.terminations (
    termination_id INTEGER NOT NULL,
    employee_id INTEGER NOT NULL,
    termination_date DATE NOT NULL,
    reason VARCHAR NOT NULL,
    is_voluntary BOOLEAN NOT NULL
);
COMMENT ON TABLE hr.terminations IS 'Employment terminations.';
COMMENT ON COLUMN hr.terminations.termination_id IS 'id';
COMMENT ON COLUMN hr.terminations.employee_id IS 'employee';
COMMENT ON COLUMN hr.terminations.termination_date IS 'last day';
COMMENT ON COLUMN hr.terminations.reason IS 'reason';
COMMENT ON COLUMN hr.terminations.is_voluntary IS 'resignation';

CREATE TABLE hr.time_off (
    time_off_id BIGINT NOT NULL,
    employee_id INTEGER NOT NULL,
    leave_type VARCHAR NOT NULL,
    start_date DATE NOT NULL,
    days DECIMAL(5,1) NOT NULL
);
COMMENT ON TABLE hr.time_off IS 'Leave taken.';
COMMENT ON COLUMN hr.time_off.time_off_id IS 'id';
COMMENT ON COLUMN hr.time_off.employee_id IS 'employee';
COMMENT ON COLUMN hr.time_off.leave_type IS 'vacation, sick, parental, unpaid';
COMMENT ON COLUMN hr.time_off.start_date IS 'first day';
COMMENT ON COLUMN hr.time_off.days IS 'working days';

CREATE TABLE hr.training_completions (
    completion_id BIGINT NOT NULL,
    employee_id INTEGER NOT NULL,
    course_code VARCHAR NOT NULL,
    completed_date DATE NOT NULL,
    score INTEGER
);
COMMENT ON TABLE hr.training_completions IS 'Completed trainings.';
COMMENT ON COLUMN hr.training_completions.completion_id IS 'id';
COMMENT ON COLUMN hr.training_completions.employee_id IS 'employee';
COMMENT ON COLUMN hr.training_completions.course_code IS 'course';
COMMENT ON COLUMN hr.training_completions.completed_date IS 'date';
COMMENT ON COLUMN hr.training_completions.score IS 'score';

CREATE TABLE ops.carriers (
    carrier_id INTEGER NOT NULL,
    carrier_name VARCHAR NOT NULL,
    service_level VARCHAR NOT NULL
);
COMMENT ON TABLE ops.carriers IS 'Parcel carriers.';
COMMENT ON COLUMN ops.carriers.carrier_id IS 'id';
COMMENT ON COLUMN ops.carriers.carrier_name IS 'name';
COMMENT ON COLUMN ops.carriers.service_level IS 'standard or express';

CREATE TABLE ops.data_quality_issues (
    issue_id INTEGER NOT NULL,
    table_name VARCHAR NOT NULL,
    description VARCHAR NOT NULL,
    opened_date DATE NOT NULL,
    resolved_date DATE
);
COMMENT ON TABLE ops.data_quality_issues IS 'Known data quality issues.';
COMMENT ON COLUMN ops.data_quality_issues.issue_id IS 'id';
COMMENT ON COLUMN ops.data_quality_issues.table_name IS 'table';
COMMENT ON COLUMN ops.data_quality_issues.description IS 'what is wrong';
COMMENT ON COLUMN ops.data_quality_issues.opened_date IS 'reported';
COMMENT ON COLUMN ops.data_quality_issues.resolved_date IS 'fixed';

CREATE TABLE ops.dim_date (
    date_day DATE NOT NULL,
    year INTEGER NOT NULL,
    quarter INTEGER NOT NULL,
    month INTEGER NOT NULL,
    day_of_week INTEGER NOT NULL,
    is_weekend BOOLEAN NOT NULL,
    fiscal_year INTEGER NOT NULL,
    fiscal_quarter INTEGER NOT NULL,
    fiscal_period INTEGER NOT NULL,
    is_holiday_us BOOLEAN NOT NULL
);
COMMENT ON TABLE ops.dim_date IS 'Calendar with the fiscal calendar (fiscal year starts February 1).';
COMMENT ON COLUMN ops.dim_date.date_day IS 'day';
COMMENT ON COLUMN ops.dim_date.year IS 'calendar year';
COMMENT ON COLUMN ops.dim_date.quarter IS 'calendar quarter';
COMMENT ON COLUMN ops.dim_date.month IS 'calendar month';
COMMENT ON COLUMN ops.dim_date.day_of_week IS 'ISO day of week (1 = Monday)';
COMMENT ON COLUMN ops.dim_date.is_weekend IS 'Saturday or Sunday';
COMMENT ON COLUMN ops.dim_date.fiscal_year IS 'fiscal year (named after the calendar year it starts in)';
COMMENT ON COLUMN ops.dim_date.fiscal_quarter IS 'fiscal quarter';
COMMENT ON COLUMN ops.dim_date.fiscal_period IS 'fiscal period 1-12 (1 = February)';
COMMENT ON COLUMN ops.dim_date.is_holiday_us IS 'US federal holiday or Black Friday';

CREATE TABLE ops.etl_runs (
    run_id BIGINT NOT NULL,
    job_name VARCHAR NOT NULL,
    target_table VARCHAR NOT NULL,
    started_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP NOT NULL,
    rows_loaded BIGINT NOT NULL,
    status VARCHAR NOT NULL
);
COMMENT ON TABLE ops.etl_runs IS 'Pipeline run log.';
COMMENT ON COLUMN ops.etl_runs.run_id IS 'id';
COMMENT ON COLUMN ops.etl_runs.job_name IS 'job';
COMMENT ON COLUMN ops.etl_runs.target_table IS 'table loaded';
COMMENT ON COLUMN ops.etl_runs.started_at IS 'start (UTC)';
COMMENT ON COLUMN ops.etl_runs.finished_at IS 'end';
COMMENT ON COLUMN ops.etl_runs.rows_loaded IS 'rows';
COMMENT ON COLUMN ops.etl_runs.status IS 'success or failed';

CREATE TABLE ops.inventory_snapshots (
    snapshot_date DATE NOT NULL,
    warehouse_id INTEGER NOT NULL,
    product_id INTEGER NOT NULL,
    on_hand_units INTEGER NOT NULL,
    reserved_units INTEGER NOT NULL
);
COMMENT ON TABLE ops.inventory_snapshots IS 'Month-end inventory by product and warehouse.';
COMMENT ON COLUMN ops.inventory_snapshots.snapshot_date IS 'month-end day';
COMMENT ON COLUMN ops.inventory_snapshots.warehouse_id IS 'warehouse';
COMMENT ON COLUMN ops.inventory_snapshots.product_id IS 'product';
COMMENT ON COLUMN ops.inventory_snapshots.on_hand_units IS 'units on hand';
COMMENT ON COLUMN ops.inventory_snapshots.reserved_units IS 'units reserved for open orders';

-- TRAP: deprecated table (ops.inventory_snapshots_old); never query it.
-- TRAP: DEPRECATED: frozen at the 2024-06-30 cutover; on-hand units match ops.inventory_snapshots up to then.
CREATE TABLE ops.inventory_snapshots_old (
    snapshot_date DATE NOT NULL,
    warehouse_id INTEGER NOT NULL,
    product_id INTEGER NOT NULL,
    on_hand_units INTEGER NOT NULL,
    on_hand_value_usd DECIMAL(14,2) NOT NULL
);
COMMENT ON TABLE ops.inventory_snapshots_old IS 'Inventory snapshots with valuation.';
COMMENT ON COLUMN ops.inventory_snapshots_old.snapshot_date IS 'month-end';
COMMENT ON COLUMN ops.inventory_snapshots_old.warehouse_id IS 'warehouse';
COMMENT ON COLUMN ops.inventory_snapshots_old.product_id IS 'product';
COMMENT ON COLUMN ops.inventory_snapshots_old.on_hand_units IS 'units';
COMMENT ON COLUMN ops.inventory_snapshots_old.on_hand_value_usd IS 'units x unit cost at snapshot time';

CREATE TABLE ops.product_costs (
    product_cost_id BIGINT NOT NULL,
    product_id INTEGER NOT NULL,
    unit_cost_usd DECIMAL(10,2) NOT NULL,
    valid_from DATE NOT NULL,
    valid_to DATE NOT NULL
);
COMMENT ON TABLE ops.product_costs IS 'Unit cost of products (type-2).';
COMMENT ON COLUMN ops.product_costs.product_cost_id IS 'id';
COMMENT ON COLUMN ops.product_costs.product_id IS 'product';
COMMENT ON COLUMN ops.product_costs.unit_cost_usd IS 'landed cost per unit';
COMMENT ON COLUMN ops.product_costs.valid_from IS 'first day';
COMMENT ON COLUMN ops.product_costs.valid_to IS 'next version start (exclusive), 9999-12-31 if current';

CREATE TABLE ops.purchase_order_lines (
    po_line_id BIGINT NOT NULL,
    po_id BIGINT NOT NULL,
    product_id INTEGER NOT NULL,
    quantity INTEGER NOT NULL,
    unit_cost_usd DECIMAL(10,2) NOT NULL
);
COMMENT ON TABLE ops.purchase_order_lines IS 'Purchase order lines.';
COMMENT ON COLUMN ops.purchase_order_lines.po_line_id IS 'id';
COMMENT ON COLUMN ops.purchase_order_lines.po_id IS 'purchase order';
COMMENT ON COLUMN ops.purchase_order_lines.product_id IS 'product';
COMMENT ON COLUMN ops.purchase_order_lines.quantity IS 'units';
COMMENT ON COLUMN ops.purchase_order_lines.unit_cost_usd IS 'cost per unit';

CREATE TABLE ops.purchase_orders (
    po_id BIGINT NOT NULL,
    supplier_id INTEGER NOT NULL,
    warehouse_id INTEGER NOT NULL,
    ordered_date DATE NOT NULL,
    expected_date DATE NOT NULL,
    received_date DATE,
    status VARCHAR NOT NULL
);
COMMENT ON TABLE ops.purchase_orders IS 'Purchase orders to suppliers.';
COMMENT ON COLUMN ops.purchase_orders.po_id IS 'id';
COMMENT ON COLUMN ops.purchase_orders.supplier_id IS 'supplier';
COMMENT ON COLUMN ops.purchase_orders.warehouse_id IS 'destination';
COMMENT ON COLUMN ops.purchase_orders.ordered_date IS 'order date';
COMMENT ON COLUMN ops.purchase_orders.expected_date IS 'promised delivery';
COMMENT ON COLUMN ops.purchase_orders.received_date IS 'actual delivery';
COMMENT ON COLUMN ops.purchase_orders.status IS 'open, received, cancelled';

CREATE TABLE ops.shipment_tracking (
    tracking_event_id BIGINT NOT NULL,
    shipment_id BIGINT NOT NULL,
    scan_type VARCHAR NOT NULL,
    scanned_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE ops.shipment_tracking IS 'Carrier tracking scans (2025 onwards).';
COMMENT ON COLUMN ops.shipment_tracking.tracking_event_id IS 'id';
COMMENT ON COLUMN ops.shipment_tracking.shipment_id IS 'shipment';
COMMENT ON COLUMN ops.shipment_tracking.scan_type IS 'picked_up, in_transit, out_for_delivery, delivered';
COMMENT ON COLUMN ops.shipment_tracking.scanned_at IS 'time (UTC)';

CREATE TABLE ops.stock_movements (
    movement_id BIGINT NOT NULL,
    warehouse_id INTEGER NOT NULL,
    product_id INTEGER NOT NULL,
    movement_type VARCHAR NOT NULL,
    quantity INTEGER NOT NULL,
    moved_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE ops.stock_movements IS 'Inventory movements.';
COMMENT ON COLUMN ops.stock_movements.movement_id IS 'id';
COMMENT ON COLUMN ops.stock_movements.warehouse_id IS 'warehouse';
COMMENT ON COLUMN ops.stock_movements.product_id IS 'product';
COMMENT ON COLUMN ops.stock_movements.movement_type IS 'receipt, pick, adjustment, transfer';
COMMENT ON COLUMN ops.stock_movements.quantity IS 'signed units';
COMMENT ON COLUMN ops.stock_movements.moved_at IS 'time';

CREATE TABLE ops.store_hours (
    store_id INTEGER NOT NULL,
    day_of_week INTEGER NOT NULL,
    opens_at TIME NOT NULL,
    closes_at TIME NOT NULL
);
COMMENT ON TABLE ops.store_hours IS 'Opening hours (store-local time).';
COMMENT ON COLUMN ops.store_hours.store_id IS 'store';
COMMENT ON COLUMN ops.store_hours.day_of_week IS 'ISO day of week';
COMMENT ON COLUMN ops.store_hours.opens_at IS 'opening (local)';
COMMENT ON COLUMN ops.store_hours.closes_at IS 'closing (local)';

CREATE TABLE ops.suppliers (
    supplier_id INTEGER NOT NULL,
    supplier_name VARCHAR NOT NULL,
    country_code VARCHAR NOT NULL,
    lead_time_days INTEGER NOT NULL
);
COMMENT ON TABLE ops.suppliers IS 'Merchandise suppliers.';
COMMENT ON COLUMN ops.suppliers.supplier_id IS 'id';
COMMENT ON COLUMN ops.suppliers.supplier_name IS 'name';
COMMENT ON COLUMN ops.suppliers.country_code IS 'country';
COMMENT ON COLUMN ops.suppliers.lead_time_days IS 'contractual lead time';

CREATE TABLE ops.warehouses (
    warehouse_id INTEGER NOT NULL,
    warehouse_name VARCHAR NOT NULL,
    country_code VARCHAR NOT NULL,
    is_third_party BOOLEAN NOT NULL
);
COMMENT ON TABLE ops.warehouses IS 'Distribution centers.';
COMMENT ON COLUMN ops.warehouses.warehouse_id IS 'id';
COMMENT ON COLUMN ops.warehouses.warehouse_name IS 'name';
COMMENT ON COLUMN ops.warehouses.country_code IS 'country';
COMMENT ON COLUMN ops.warehouses.is_third_party IS 'operated by a 3PL';

-- TRAP: deprecated table (legacy.aov_monthly); never query it.
-- TRAP: DEPRECATED (legacy schema): gross AOV (incl. tax, shipping, cancelled orders and test accounts), up to the cutover only.
CREATE TABLE legacy.aov_monthly (
    month DATE NOT NULL,
    orders INTEGER NOT NULL,
    aov_usd DECIMAL(12,2) NOT NULL
);
COMMENT ON TABLE legacy.aov_monthly IS 'Average order value by month.';
COMMENT ON COLUMN legacy.aov_monthly.month IS 'month';
COMMENT ON COLUMN legacy.aov_monthly.orders IS 'orders';
COMMENT ON COLUMN legacy.aov_monthly.aov_usd IS 'average order value';

-- TRAP: deprecated table (legacy.campaign_results); never query it.
-- TRAP: DEPRECATED (legacy schema).
CREATE TABLE legacy.campaign_results (
    campaign_id INTEGER NOT NULL,
    spend_usd DECIMAL(14,2) NOT NULL,
    orders INTEGER NOT NULL,
    revenue_usd DECIMAL(14,2) NOT NULL
);
COMMENT ON TABLE legacy.campaign_results IS 'Campaign results (old marketing mart).';
COMMENT ON COLUMN legacy.campaign_results.campaign_id IS 'campaign';
COMMENT ON COLUMN legacy.campaign_results.spend_usd IS 'spend';
COMMENT ON COLUMN legacy.campaign_results.orders IS 'attributed orders';
COMMENT ON COLUMN legacy.campaign_results.revenue_usd IS 'attributed revenue';

-- TRAP: deprecated table (legacy.customers); never query it.
-- TRAP: DEPRECATED (legacy schema): CRM export frozen at the 2024-06-30 cutover, old segment codes.
CREATE TABLE legacy.customers (
    cust_no BIGINT NOT NULL,
    full_name VARCHAR,
    email VARCHAR,
    country VARCHAR NOT NULL,
    segment_code VARCHAR NOT NULL,
    created DATE NOT NULL
);
COMMENT ON TABLE legacy.customers IS 'CRM customer export.';
COMMENT ON COLUMN legacy.customers.cust_no IS 'customer number';
COMMENT ON COLUMN legacy.customers.full_name IS 'name';
COMMENT ON COLUMN legacy.customers.email IS 'email';
COMMENT ON COLUMN legacy.customers.country IS 'country';
COMMENT ON COLUMN legacy.customers.segment_code IS 'C, P or B';
COMMENT ON COLUMN legacy.customers.created IS 'signup date';

-- TRAP: deprecated table (legacy.employees); never query it.
-- TRAP: DEPRECATED (legacy schema).
CREATE TABLE legacy.employees (
    emp_no INTEGER NOT NULL,
    name VARCHAR NOT NULL,
    dept VARCHAR NOT NULL,
    active_flag VARCHAR NOT NULL
);
COMMENT ON TABLE legacy.employees IS 'Employee list (legacy payroll system).';
COMMENT ON COLUMN legacy.employees.emp_no IS 'employee number';
COMMENT ON COLUMN legacy.employees.name IS 'name';
COMMENT ON COLUMN legacy.employees.dept IS 'department';
COMMENT ON COLUMN legacy.employees.active_flag IS 'Y or N';

-- TRAP: deprecated table (legacy.fx_rates_manual); never query it.
-- TRAP: DEPRECATED (legacy schema).
CREATE TABLE legacy.fx_rates_manual (
    month_end DATE NOT NULL,
    currency VARCHAR NOT NULL,
    rate DECIMAL(12,6) NOT NULL
);
COMMENT ON TABLE legacy.fx_rates_manual IS 'Month-end FX rates maintained by hand.';
COMMENT ON COLUMN legacy.fx_rates_manual.month_end IS 'month-end';
COMMENT ON COLUMN legacy.fx_rates_manual.currency IS 'currency';
COMMENT ON COLUMN legacy.fx_rates_manual.rate IS 'USD per unit';

-- TRAP: deprecated table (legacy.gl_balances); never query it.
-- TRAP: DEPRECATED (legacy schema).
CREATE TABLE legacy.gl_balances (
    period VARCHAR NOT NULL,
    account INTEGER NOT NULL,
    balance_usd DECIMAL(16,2) NOT NULL
);
COMMENT ON TABLE legacy.gl_balances IS 'GL balances (legacy finance system).';
COMMENT ON COLUMN legacy.gl_balances.period IS 'yyyy-mm';
COMMENT ON COLUMN legacy.gl_balances.account IS 'account';
COMMENT ON COLUMN legacy.gl_balances.balance_usd IS 'balance';

-- TRAP: deprecated table (legacy.kpi_active_users); never query it.
-- TRAP: DEPRECATED (legacy schema) but still loaded by a zombie job: distinct logged-in users with any session in the calendar month, bots, test and internal accounts included.
CREATE TABLE legacy.kpi_active_users (
    kpi_month DATE NOT NULL,
    active_users INTEGER NOT NULL
);
COMMENT ON TABLE legacy.kpi_active_users IS 'Monthly active users KPI.';
COMMENT ON COLUMN legacy.kpi_active_users.kpi_month IS 'month';
COMMENT ON COLUMN legacy.kpi_active_users.active_users IS 'monthly active users';

-- TRAP: deprecated table (legacy.order_items); never query it.
-- TRAP: DEPRECATED (legacy schema).
CREATE TABLE legacy.order_items (
    order_no BIGINT NOT NULL,
    item_no INTEGER NOT NULL,
    product_no INTEGER NOT NULL,
    qty INTEGER NOT NULL,
    net_usd DECIMAL(14,2) NOT NULL
);
COMMENT ON TABLE legacy.order_items IS 'Order items (legacy ERP).';
COMMENT ON COLUMN legacy.order_items.order_no IS 'order number';
COMMENT ON COLUMN legacy.order_items.item_no IS 'line';
COMMENT ON COLUMN legacy.order_items.product_no IS 'product';
COMMENT ON COLUMN legacy.order_items.qty IS 'units';
COMMENT ON COLUMN legacy.order_items.net_usd IS 'net amount in USD';

-- TRAP: deprecated table (legacy.orders); never query it.
-- TRAP: DEPRECATED (legacy schema): legacy ERP order headers, up to the cutover only.
CREATE TABLE legacy.orders (
    order_no BIGINT NOT NULL,
    cust_no BIGINT NOT NULL,
    order_dt DATE NOT NULL,
    store_no INTEGER NOT NULL,
    order_status VARCHAR NOT NULL,
    order_total_usd DECIMAL(14,2) NOT NULL
);
COMMENT ON TABLE legacy.orders IS 'Orders (legacy ERP).';
COMMENT ON COLUMN legacy.orders.order_no IS 'order number';
COMMENT ON COLUMN legacy.orders.cust_no IS 'customer number';
COMMENT ON COLUMN legacy.orders.order_dt IS 'order date';
COMMENT ON COLUMN legacy.orders.store_no IS 'store';
COMMENT ON COLUMN legacy.orders.order_status IS 'C (complete) or X (cancelled)';
COMMENT ON COLUMN legacy.orders.order_total_usd IS 'order total in USD';

-- TRAP: deprecated table (legacy.products); never query it.
-- TRAP: DEPRECATED (legacy schema).
CREATE TABLE legacy.products (
    product_no INTEGER NOT NULL,
    description VARCHAR NOT NULL,
    category VARCHAR NOT NULL,
    price_usd DECIMAL(10,2) NOT NULL
);
COMMENT ON TABLE legacy.products IS 'Product master (legacy).';
COMMENT ON COLUMN legacy.products.product_no IS 'product number';
COMMENT ON COLUMN legacy.products.description IS 'name';
COMMENT ON COLUMN legacy.products.category IS 'old category name';
COMMENT ON COLUMN legacy.products.price_usd IS 'price at extract';

-- TRAP: deprecated table (legacy.returns); never query it.
-- TRAP: DEPRECATED (legacy schema).
CREATE TABLE legacy.returns (
    rma_no BIGINT NOT NULL,
    order_no BIGINT NOT NULL,
    rma_date DATE NOT NULL,
    refund_usd DECIMAL(14,2)
);
COMMENT ON TABLE legacy.returns IS 'Returns (legacy ERP).';
COMMENT ON COLUMN legacy.returns.rma_no IS 'return number';
COMMENT ON COLUMN legacy.returns.order_no IS 'order';
COMMENT ON COLUMN legacy.returns.rma_date IS 'date';
COMMENT ON COLUMN legacy.returns.refund_usd IS 'refund';

-- TRAP: deprecated table (legacy.revenue_daily); never query it.
-- TRAP: DEPRECATED (legacy schema): daily revenue computed like the canonical metric up to 2024-06-30 (coincides), never loaded since.
CREATE TABLE legacy.revenue_daily (
    revenue_date DATE NOT NULL,
    store_no INTEGER NOT NULL,
    revenue_usd DECIMAL(14,2) NOT NULL
);
COMMENT ON TABLE legacy.revenue_daily IS 'Daily revenue.';
COMMENT ON COLUMN legacy.revenue_daily.revenue_date IS 'day';
COMMENT ON COLUMN legacy.revenue_daily.store_no IS 'store';
COMMENT ON COLUMN legacy.revenue_daily.revenue_usd IS 'revenue';

-- TRAP: deprecated table (legacy.stores); never query it.
-- TRAP: DEPRECATED (legacy schema).
CREATE TABLE legacy.stores (
    store_no INTEGER NOT NULL,
    store_name VARCHAR NOT NULL,
    region VARCHAR NOT NULL
);
COMMENT ON TABLE legacy.stores IS 'Store list (legacy).';
COMMENT ON COLUMN legacy.stores.store_no IS 'store';
COMMENT ON COLUMN legacy.stores.store_name IS 'name';
COMMENT ON COLUMN legacy.stores.region IS 'region name';

-- TRAP: deprecated table (legacy.web_visits); never query it.
-- TRAP: DEPRECATED (legacy schema).
CREATE TABLE legacy.web_visits (
    visit_date DATE NOT NULL,
    visits INTEGER NOT NULL,
    visitors INTEGER NOT NULL
);
COMMENT ON TABLE legacy.web_visits IS 'Daily web visits.';
COMMENT ON COLUMN legacy.web_visits.visit_date IS 'day';
COMMENT ON COLUMN legacy.web_visits.visits IS 'sessions';
COMMENT ON COLUMN legacy.web_visits.visitors IS 'distinct users';
