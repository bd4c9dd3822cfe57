"""The catalog of the Vantage Retail Group warehouse: every table, column, type,
default and comment, plus the instructor's ``-- TRAP:`` notes.

Written in a small line format so the 126 tables stay readable:

    == schema.table | table comment
    !! a trap note on the table (instructor edition only)
    column  TYPE [NOT NULL] [DEFAULT x] | column comment !! trap note on the column

Comments are what an analyst sees in the student edition; some of them are stale on
purpose, and the trap note says how.
"""
from __future__ import annotations

from dataclasses import dataclass, field

SCHEMAS = ("finance", "sales", "orders", "returns", "marketing", "web", "hr", "ops", "legacy")
LOGICAL_DATE = "2025-11-30"
ERP_CUTOVER = "2024-06-30"


@dataclass
class Column:
    name: str
    ddl: str  # type plus NOT NULL / DEFAULT
    comment: str
    trap: str = ""


@dataclass
class Table:
    schema: str
    name: str
    comment: str
    columns: list[Column] = field(default_factory=list)
    traps: list[str] = field(default_factory=list)

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"


_SPEC = r"""
############################################################################ finance
== finance.revenue_recognized | Recognized revenue: one row per order line when it is recognized (at shipment for online orders, at sale for store orders). Amounts are net of line discounts and exclude tax and shipping.
!! CANONICAL revenue. Count only posting_status = 'posted'. Pending rows (last days before the snapshot) and reversed duplicate postings must be excluded. Test accounts, cancelled/void and soft-deleted orders never reach this table.
revenue_id        BIGINT NOT NULL | surrogate key
order_id          BIGINT NOT NULL | order (orders.orders)
order_line_id     BIGINT NOT NULL | order line (orders.order_lines)
store_id          INTEGER NOT NULL | selling store or online storefront (sales.stores)
cost_center_id    INTEGER NOT NULL | cost center the revenue is booked to (finance.cost_centers)
recognized_date   DATE NOT NULL | date the revenue is recognized
currency_code     VARCHAR NOT NULL | transaction currency
amount_local      DECIMAL(14,2) NOT NULL | recognized amount in the transaction currency, net of line discounts
fx_rate           DECIMAL(12,6) NOT NULL | USD per unit of the transaction currency used for conversion
amount_usd        DECIMAL(14,2) NOT NULL | recognized amount in USD, net of line discounts
posting_status    VARCHAR NOT NULL DEFAULT 'pending' | posted, pending or reversed !! only 'posted' is revenue; about 1% of lines also carry a 'reversed' duplicate posting
posted_at         TIMESTAMP | when the entry was posted to the ledger
source_system     VARCHAR NOT NULL | erp_legacy until the 2024-06-30 cutover, erp_nova after

== finance.revenue_recognized_v1 | Recognized revenue (v1 pipeline).
!! DEPRECATED. Frozen copy of the pre-cutover pipeline: identical to revenue_recognized up to 2024-06-30, but a zombie legacy job still loads it: after the cutover it only sees store (POS) sales and loads them gross of discounts. Numbers coincide before the cutover and diverge after it.
revenue_id        BIGINT NOT NULL | surrogate key
order_id          BIGINT NOT NULL | order
order_line_id     BIGINT NOT NULL | order line
store_id          INTEGER NOT NULL | store
cost_center_id    INTEGER NOT NULL | cost center
recognized_date   DATE NOT NULL | recognition date
currency_code     VARCHAR NOT NULL | transaction currency
amount_local      DECIMAL(14,2) NOT NULL | amount in transaction currency
fx_rate           DECIMAL(12,6) NOT NULL | conversion rate
amount_usd        DECIMAL(14,2) NOT NULL | recognized amount in USD !! after 2024-06-30: gross of discounts, store channel only
posting_status    VARCHAR NOT NULL | posted, pending or reversed
posted_at         TIMESTAMP | posting timestamp
source_system     VARCHAR NOT NULL | source ERP

== finance.fx_rates | Daily reference exchange rates.
!! Published on business days only (no Saturday/Sunday rows) and there is no USD row: convert with the latest rate on or before the date (ASOF join) and treat USD as 1.
rate_date         DATE NOT NULL | publication date
currency_code     VARCHAR NOT NULL | ISO currency code
usd_per_unit      DECIMAL(12,6) NOT NULL | units of this currency per 1 USD !! STALE COMMENT: the value is USD per 1 unit of the currency (multiply local amounts by it)
source            VARCHAR NOT NULL | rate provider

== finance.fx_rates_bak | Exchange rates (backup).
!! DEPRECATED backup taken when the rate provider changed on 2025-01-01; identical before that date, old-provider rates after it.
rate_date         DATE NOT NULL | rate date
currency_code     VARCHAR NOT NULL | currency
usd_per_unit      DECIMAL(12,6) NOT NULL | USD per unit
source            VARCHAR NOT NULL | provider

== finance.currencies | Currencies the group trades in.
currency_code     VARCHAR NOT NULL | ISO 4217 code
currency_name     VARCHAR NOT NULL | name
minor_units       INTEGER NOT NULL | decimal places
is_reporting      BOOLEAN NOT NULL | TRUE for the group reporting currency (USD)

== finance.gl_accounts | General ledger chart of accounts.
gl_account_id     INTEGER NOT NULL | account number
account_name      VARCHAR NOT NULL | account name
account_type      VARCHAR NOT NULL | asset, liability, equity, revenue, expense
is_active         BOOLEAN NOT NULL | account open for posting

== finance.cost_centers | Cost centers: one per store or storefront and one per head-office department.
cost_center_id    INTEGER NOT NULL | cost center id
cost_center_name  VARCHAR NOT NULL | name
store_id          INTEGER | store for store cost centers
department_id     INTEGER | department for head-office cost centers (hr.departments)
country_code      VARCHAR NOT NULL | country

== finance.gl_entries | Monthly general ledger balances by account and cost center.
entry_id          BIGINT NOT NULL | entry id
fiscal_period_id  INTEGER NOT NULL | fiscal period (finance.fiscal_periods)
gl_account_id     INTEGER NOT NULL | account
cost_center_id    INTEGER NOT NULL | cost center
amount_usd        DECIMAL(16,2) NOT NULL | net movement in USD (debit positive)
posted_at         TIMESTAMP NOT NULL | posting time

== finance.fiscal_periods | Fiscal periods. The fiscal year starts on February 1 and is named after the calendar year in which it starts (FY2025 = 2025-02-01 to 2026-01-31).
fiscal_period_id  INTEGER NOT NULL | yyyymm-style id of the fiscal period (fiscal year * 100 + period)
fiscal_year       INTEGER NOT NULL | fiscal year
fiscal_period     INTEGER NOT NULL | period 1-12 (1 = February)
fiscal_quarter    INTEGER NOT NULL | quarter 1-4
start_date        DATE NOT NULL | first day
end_date          DATE NOT NULL | last day
is_closed         BOOLEAN NOT NULL | period closed for posting

== finance.budgets | Monthly budget by cost center.
budget_id         INTEGER NOT NULL | budget line id
fiscal_period_id  INTEGER NOT NULL | fiscal period
cost_center_id    INTEGER NOT NULL | cost center
revenue_budget_usd DECIMAL(14,2) NOT NULL | budgeted revenue
opex_budget_usd   DECIMAL(14,2) NOT NULL | budgeted operating expense
version           VARCHAR NOT NULL | original or reforecast !! two versions per period from FY2025; filter on one

== finance.payments | Payments received against B2B invoices (net-30 accounts).
payment_id        BIGINT NOT NULL | payment id
invoice_id        BIGINT NOT NULL | invoice paid (sales.invoices)
paid_date         DATE NOT NULL | date received
amount_local      DECIMAL(14,2) NOT NULL | amount in invoice currency
currency_code     VARCHAR NOT NULL | currency
method            VARCHAR NOT NULL | wire, ach, card, cheque

== finance.tax_rates | Sales tax / VAT rates by country.
country_code      VARCHAR NOT NULL | country
tax_rate          DECIMAL(6,4) NOT NULL | rate as a fraction
valid_from        DATE NOT NULL | first day the rate applies
valid_to          DATE | last day, NULL while current

== finance.vendors | Suppliers of goods and services as set up in accounts payable.
vendor_id         INTEGER NOT NULL | vendor id
vendor_name       VARCHAR NOT NULL | legal name
country_code      VARCHAR NOT NULL | country
payment_terms_days INTEGER NOT NULL | payment terms
supplier_id       INTEGER | matching ops.suppliers id for merchandise vendors

== finance.ap_invoices | Vendor invoices (accounts payable).
ap_invoice_id     BIGINT NOT NULL | invoice id
vendor_id         INTEGER NOT NULL | vendor
invoice_date      DATE NOT NULL | invoice date
due_date          DATE NOT NULL | due date
amount_local      DECIMAL(14,2) NOT NULL | amount in invoice currency
currency_code     VARCHAR NOT NULL | currency
status            VARCHAR NOT NULL | open, paid, disputed, void
paid_date         DATE | payment date

== finance.revenue_adjustments | Manual revenue adjustments (accruals, corrections) booked by finance.
!! Not part of canonical recognized revenue.
adjustment_id     INTEGER NOT NULL | id
fiscal_period_id  INTEGER NOT NULL | period
cost_center_id    INTEGER NOT NULL | cost center
amount_usd        DECIMAL(14,2) NOT NULL | adjustment (signed)
reason            VARCHAR NOT NULL | reason
status            VARCHAR NOT NULL | posted or pending

== finance.period_close_log | Month-end close checklist events.
log_id            INTEGER NOT NULL | id
fiscal_period_id  INTEGER NOT NULL | period
step              VARCHAR NOT NULL | close step
completed_at      TIMESTAMP NOT NULL | completion time
completed_by      INTEGER NOT NULL | employee (hr.employees)

############################################################################ sales
== sales.customers | Customers (current state). One row per customer account.
customer_id       BIGINT NOT NULL | customer id
customer_code     VARCHAR NOT NULL | external customer number
first_name        VARCHAR | first name (NULL once erased)
last_name         VARCHAR | last name (NULL once erased)
email             VARCHAR | email (NULL once erased)
country_code      VARCHAR NOT NULL | country of residence
home_store_id     INTEGER NOT NULL | nearest physical store (sales.stores)
segment           VARCHAR NOT NULL | Consumer, Premium or Business (current value; history in sales.dim_customer)
loyalty_tier      VARCHAR NOT NULL | none, silver, gold, platinum
signup_at         TIMESTAMP NOT NULL | account creation (UTC)
birth_year        INTEGER | year of birth
marketing_opt_in  BOOLEAN NOT NULL | consented to marketing
is_test           BOOLEAN NOT NULL DEFAULT FALSE | internal QA / test account !! exclude from every business metric
deleted_at        TIMESTAMP | set when the account was erased on request (soft delete) !! soft delete: erased customers stay in the table

== sales.dim_customer | Customer dimension, type-2 history of segment, tier and country.
!! SCD2: pick the version valid on the date of interest (valid_from <= d < valid_to); is_current is only right for today.
customer_sk       BIGINT NOT NULL | surrogate key of the version
customer_id       BIGINT NOT NULL | customer
segment           VARCHAR NOT NULL | segment during the validity window
loyalty_tier      VARCHAR NOT NULL | loyalty tier during the window
country_code      VARCHAR NOT NULL | country during the window
valid_from        DATE NOT NULL | first day the version applies
valid_to          DATE NOT NULL DEFAULT DATE '9999-12-31' | day the next version starts (exclusive); 9999-12-31 for the current version
is_current        BOOLEAN NOT NULL | current version

== sales.customer_addresses | Customer postal addresses.
address_id        BIGINT NOT NULL | id
customer_id       BIGINT NOT NULL | customer
address_type      VARCHAR NOT NULL | billing or shipping
city              VARCHAR NOT NULL | city
postal_code       VARCHAR NOT NULL | postal code
country_code      VARCHAR NOT NULL | country
is_default        BOOLEAN NOT NULL | default address of that type

== sales.products | Product master (current).
product_id        INTEGER NOT NULL | product id
sku               VARCHAR NOT NULL | stock keeping unit
product_name      VARCHAR NOT NULL | name
category_id       INTEGER NOT NULL | category (sales.product_categories)
brand             VARCHAR NOT NULL | brand
list_price_usd    DECIMAL(10,2) NOT NULL | current list price in USD (history in sales.product_price_history)
launched_date     DATE NOT NULL | first day on sale
discontinued_date DATE | last day on sale
is_active         BOOLEAN NOT NULL | on sale today

== sales.product_categories | Product categories and their departments.
category_id       INTEGER NOT NULL | id
category_name     VARCHAR NOT NULL | category
department_name   VARCHAR NOT NULL | merchandising department
return_window_days INTEGER NOT NULL | return window

== sales.product_price_history | List price history (type-2).
!! SCD2 of list prices; store prices abroad are local price lists, not conversions of this.
price_version_id  BIGINT NOT NULL | version id
product_id        INTEGER NOT NULL | product
list_price_usd    DECIMAL(10,2) NOT NULL | list price in USD
valid_from        DATE NOT NULL | first day
valid_to          DATE NOT NULL | day the next price starts (exclusive); 9999-12-31 if current
is_current        BOOLEAN NOT NULL | current price

== sales.stores | Stores and online storefronts.
store_id          INTEGER NOT NULL | store id
store_name        VARCHAR NOT NULL | name
store_type        VARCHAR NOT NULL | physical or online
region_id         INTEGER NOT NULL | sales region (sales.regions)
country_code      VARCHAR NOT NULL | country
city              VARCHAR NOT NULL | city
currency_code     VARCHAR NOT NULL | selling currency
timezone          VARCHAR NOT NULL | IANA time zone of the store
utc_offset_minutes INTEGER NOT NULL | standard offset from UTC (DST is not applied in the warehouse)
opened_date       DATE NOT NULL | opening date
closed_date       DATE | closing date
square_meters     INTEGER | selling area (physical stores)

== sales.channels | Sales channels.
channel_id        INTEGER NOT NULL | id
channel_name      VARCHAR NOT NULL | store, web, app, marketplace, phone
is_online         BOOLEAN NOT NULL | online channel

== sales.regions | Sales regions.
region_id         INTEGER NOT NULL | id
region_name       VARCHAR NOT NULL | name
country_code      VARCHAR NOT NULL | country
regional_manager_id INTEGER | employee (hr.employees)

== sales.invoices | Invoices issued for orders.
invoice_id        BIGINT NOT NULL | invoice id
order_id          BIGINT NOT NULL | order
customer_id       BIGINT NOT NULL | customer billed
invoice_date      DATE NOT NULL | issue date
due_date          DATE NOT NULL | due date
currency_code     VARCHAR NOT NULL | currency
total_local       DECIMAL(14,2) NOT NULL | invoice total incl. tax and shipping, invoice currency
status            VARCHAR NOT NULL | paid or open

== sales.invoice_lines | Invoice detail for B2B (net-30) invoices.
invoice_line_id   BIGINT NOT NULL | id
invoice_id        BIGINT NOT NULL | invoice
order_line_id     BIGINT | order line, NULL for tax and shipping lines
line_type         VARCHAR NOT NULL | merchandise, tax, shipping
amount_local      DECIMAL(14,2) NOT NULL | amount in invoice currency

== sales.rev_billed | Revenue by invoice line.
!! BILLING, not revenue: one row per invoice line on the billed date, including tax and shipping lines, including test accounts. Not net of returns.
billed_line_id    BIGINT NOT NULL | id
invoice_id        BIGINT NOT NULL | invoice
order_id          BIGINT NOT NULL | order
line_type         VARCHAR NOT NULL | merchandise, tax, shipping
billed_date       DATE NOT NULL | date billed
currency_code     VARCHAR NOT NULL | invoice currency
amount_usd        DECIMAL(14,2) NOT NULL | net revenue in USD !! STALE COMMENT: billed amount, includes tax and shipping lines

== sales.bookings_gross | Gross bookings per order.
!! Gross bookings: every order including cancelled, void and test, before discounts, dated in UTC.
order_id          BIGINT NOT NULL | order
booking_date      DATE NOT NULL | booking date (UTC)
store_id          INTEGER NOT NULL | store
order_status      VARCHAR NOT NULL | order status at load time
gross_amount_usd  DECIMAL(14,2) NOT NULL | merchandise value before discounts, USD

== sales.daily_sales_summary | Daily sales by store (dashboard feed).
!! Pre-aggregated on the UTC date, includes test accounts and soft-deleted orders; excludes cancelled/void. Does not match finance revenue.
summary_date      DATE NOT NULL | day
store_id          INTEGER NOT NULL | store
orders_count      INTEGER NOT NULL | orders
units_sold        INTEGER NOT NULL | units
net_sales_usd     DECIMAL(14,2) NOT NULL | net sales in USD
gross_sales_usd   DECIMAL(14,2) NOT NULL | gross sales in USD

== sales.sales_reps | B2B account managers.
sales_rep_id      INTEGER NOT NULL | id
employee_id       INTEGER NOT NULL | employee (hr.employees)
region_id         INTEGER NOT NULL | region covered
quota_usd         DECIMAL(14,2) NOT NULL | annual quota

== sales.promotions | Price promotions.
promotion_id      INTEGER NOT NULL | id
promotion_name    VARCHAR NOT NULL | name
discount_pct      DECIMAL(5,2) NOT NULL | discount percentage (0-100)
start_date        DATE NOT NULL | first day
end_date          DATE NOT NULL | last day
category_id       INTEGER | category targeted, NULL for site-wide

== sales.loyalty_accounts | Loyalty programme membership.
loyalty_account_id BIGINT NOT NULL | id
customer_id       BIGINT NOT NULL | customer
enrolled_date     DATE NOT NULL | enrolment
points_balance    INTEGER NOT NULL | current points
tier              VARCHAR NOT NULL | tier

== sales.customer_segments | Definitions of customer segments.
segment           VARCHAR NOT NULL | segment name
description       VARCHAR NOT NULL | definition
min_annual_spend_usd DECIMAL(12,2) | threshold

############################################################################ orders
== orders.orders | Customer orders, all channels. One row per order.
!! ordered_at is UTC; order_date is the store-local business date. total_amount is in the order currency, not USD. Exclude cancelled and void orders, soft-deleted rows and test accounts for business metrics.
order_id          BIGINT NOT NULL | order id
customer_id       BIGINT NOT NULL | customer (sales.customers)
store_id          INTEGER NOT NULL | store or online storefront (sales.stores)
channel_id        INTEGER NOT NULL | sales channel (sales.channels)
ordered_at        TIMESTAMP NOT NULL | order timestamp (UTC)
order_date        DATE NOT NULL | order date !! store-local business date, differs from CAST(ordered_at AS DATE)
status            VARCHAR NOT NULL | completed, shipped, processing, cancelled or void !! void exists only after the 2024-06-30 cutover and means cancelled after payment
currency_code     VARCHAR NOT NULL | order currency
subtotal_amount   DECIMAL(14,2) NOT NULL | merchandise value before discounts, order currency
discount_amount   DECIMAL(14,2) NOT NULL DEFAULT 0 | discounts, order currency
tax_amount        DECIMAL(14,2) NOT NULL DEFAULT 0 | tax, order currency
shipping_amount   DECIMAL(14,2) NOT NULL DEFAULT 0 | shipping charged, order currency
total_amount      DECIMAL(14,2) NOT NULL | order total in USD !! STALE COMMENT: order currency (subtotal - discount + tax + shipping), not USD
coupon_code       VARCHAR | order-level coupon (marketing.coupons)
source_system     VARCHAR NOT NULL | erp_legacy or erp_nova
deleted_at        TIMESTAMP | set when the order was removed as a duplicate entry !! soft delete

== orders.order_lines | Order lines.
order_line_id     BIGINT NOT NULL | id
order_id          BIGINT NOT NULL | order
line_no           INTEGER NOT NULL | line number within the order
product_id        INTEGER NOT NULL | product
quantity          INTEGER NOT NULL | units ordered
unit_price        DECIMAL(10,2) NOT NULL | unit price in USD !! STALE COMMENT: order currency (local price list)
discount_amount   DECIMAL(10,2) NOT NULL DEFAULT 0 | line discount, order currency
line_status       VARCHAR NOT NULL | fulfilled, open or cancelled

== orders.order_status_history | Status transitions of orders (new ERP only, from 2024-07-01).
status_event_id   BIGINT NOT NULL | id
order_id          BIGINT NOT NULL | order
status            VARCHAR NOT NULL | new status
changed_at        TIMESTAMP NOT NULL | transition time (UTC)

== orders.shipments | Shipments of online orders.
shipment_id       BIGINT NOT NULL | id
order_id          BIGINT NOT NULL | order
warehouse_id      INTEGER NOT NULL | shipping warehouse (ops.warehouses)
carrier_id        INTEGER NOT NULL | carrier (ops.carriers)
shipped_at        TIMESTAMP NOT NULL | handed to carrier (UTC)
delivered_at      TIMESTAMP | delivered (UTC), NULL while in transit
shipping_cost_usd DECIMAL(10,2) NOT NULL | carrier cost

== orders.payments | Payment transactions on orders.
payment_txn_id    BIGINT NOT NULL | id
order_id          BIGINT NOT NULL | order
txn_type          VARCHAR NOT NULL | capture, void, refund
amount_local      DECIMAL(14,2) NOT NULL | amount in order currency
method            VARCHAR NOT NULL | card, paypal, gift_card, cash, invoice
txn_at            TIMESTAMP NOT NULL | time (UTC)

== orders.carts | Abandoned shopping carts (carts that were checked out are purged at conversion).
cart_id           BIGINT NOT NULL | id
web_user_id       BIGINT | web user, NULL for guests
created_at        TIMESTAMP NOT NULL | created (UTC)

== orders.cart_items | Items in carts.
cart_item_id      BIGINT NOT NULL | id
cart_id           BIGINT NOT NULL | cart
product_id        INTEGER NOT NULL | product
quantity          INTEGER NOT NULL | units

== orders.gift_cards | Gift cards sold.
gift_card_id      BIGINT NOT NULL | id
issued_date       DATE NOT NULL | issue date
initial_value_local DECIMAL(10,2) NOT NULL | value at issue
currency_code     VARCHAR NOT NULL | currency
remaining_local   DECIMAL(10,2) NOT NULL | remaining balance

== orders.order_notes | Free-text notes on orders.
note_id           BIGINT NOT NULL | id
order_id          BIGINT NOT NULL | order
note_type         VARCHAR NOT NULL | customer, agent, system
note_text         VARCHAR NOT NULL | text
created_at        TIMESTAMP NOT NULL | time

== orders.pos_transactions | Point-of-sale transactions of store orders.
!! txn_local_ts is store-local wall-clock time, not UTC.
pos_txn_id        BIGINT NOT NULL | id
order_id          BIGINT NOT NULL | order
store_id          INTEGER NOT NULL | store
register_no       INTEGER NOT NULL | till number
cashier_employee_id INTEGER NOT NULL | cashier (hr.employees)
txn_local_ts      TIMESTAMP NOT NULL | transaction time

== orders.order_promotions | Promotions applied to order lines.
order_line_id     BIGINT NOT NULL | order line
promotion_id      INTEGER NOT NULL | promotion (sales.promotions)
discount_amount   DECIMAL(10,2) NOT NULL | discount granted, order currency

== orders.backorders | Order lines waiting for stock.
backorder_id      BIGINT NOT NULL | id
order_line_id     BIGINT NOT NULL | order line
created_at        TIMESTAMP NOT NULL | time
expected_date     DATE | expected availability
resolved_at       TIMESTAMP | resolved

== orders.orders_old | Orders.
!! DEPRECATED: pre-cutover ERP extract frozen on 2024-06-30 with denormalized customer attributes; identical to orders.orders up to the cutover, nothing after.
order_id          BIGINT NOT NULL | order id
customer_id       BIGINT NOT NULL | customer
customer_name     VARCHAR | customer full name
customer_country  VARCHAR NOT NULL | customer country
customer_segment  VARCHAR NOT NULL | customer segment at extract time
store_id          INTEGER NOT NULL | store
channel_name      VARCHAR NOT NULL | channel
ordered_at        TIMESTAMP NOT NULL | order time
order_date        DATE NOT NULL | order date
status            VARCHAR NOT NULL | status
currency_code     VARCHAR NOT NULL | currency
total_amount      DECIMAL(14,2) NOT NULL | order total
total_amount_usd  DECIMAL(14,2) NOT NULL | order total in USD
deleted_at        TIMESTAMP | soft delete

== orders.order_lines_bak | Order lines (backup).
!! DEPRECATED backup of order_lines taken before the 2023-12-31 price correction; later lines are missing and some older unit prices differ.
order_line_id     BIGINT NOT NULL | id
order_id          BIGINT NOT NULL | order
line_no           INTEGER NOT NULL | line
product_id        INTEGER NOT NULL | product
quantity          INTEGER NOT NULL | units
unit_price        DECIMAL(10,2) NOT NULL | unit price
discount_amount   DECIMAL(10,2) NOT NULL | discount
line_status       VARCHAR NOT NULL | status

############################################################################ returns
== returns.returns | Return requests (RMA), one per order returned.
!! Status matters: rejected and cancelled returns are not returns. requested_at is UTC.
return_id         BIGINT NOT NULL | return id
order_id          BIGINT NOT NULL | original order
customer_id       BIGINT NOT NULL | customer
requested_at      TIMESTAMP NOT NULL | request time (UTC)
received_date     DATE | date the goods arrived back
status            VARCHAR NOT NULL | requested, received, refunded, rejected, cancelled
reason_id         INTEGER NOT NULL | reason (returns.return_reasons)
return_channel    VARCHAR NOT NULL | mail or store

== returns.return_lines | Returned order lines.
return_line_id    BIGINT NOT NULL | id
return_id         BIGINT NOT NULL | return
order_line_id     BIGINT NOT NULL | order line returned
quantity_returned INTEGER NOT NULL | units returned
condition         VARCHAR | resellable, damaged, missing (after inspection)

== returns.refunds | Refunds paid to customers.
refund_id         BIGINT NOT NULL | id
return_id         BIGINT NOT NULL | return
refunded_at       TIMESTAMP NOT NULL | refund time (UTC)
amount_local      DECIMAL(14,2) NOT NULL | refund amount in the order currency
currency_code     VARCHAR NOT NULL | currency
method            VARCHAR NOT NULL | original_payment, store_credit, gift_card
status            VARCHAR NOT NULL | completed or failed

== returns.return_reasons | Return reason codes.
reason_id         INTEGER NOT NULL | id
reason_code       VARCHAR NOT NULL | code
description       VARCHAR NOT NULL | description
is_defect         BOOLEAN NOT NULL | product defect

== returns.inspections | Inspection of returned goods.
inspection_id     BIGINT NOT NULL | id
return_id         BIGINT NOT NULL | return
inspected_at      TIMESTAMP NOT NULL | time
grade             VARCHAR NOT NULL | A, B, C, scrap
inspector_employee_id INTEGER NOT NULL | inspector

== returns.restock_events | Returned units put back into stock.
restock_id        BIGINT NOT NULL | id
return_line_id    BIGINT NOT NULL | return line
warehouse_id      INTEGER NOT NULL | warehouse
quantity          INTEGER NOT NULL | units restocked
restocked_at      TIMESTAMP NOT NULL | time

== returns.return_shipping_labels | Prepaid return labels.
label_id          BIGINT NOT NULL | id
return_id         BIGINT NOT NULL | return
carrier_id        INTEGER NOT NULL | carrier
label_cost_usd    DECIMAL(8,2) NOT NULL | cost
created_at        TIMESTAMP NOT NULL | time

== returns.exchange_orders | Returns settled as an exchange.
exchange_id       BIGINT NOT NULL | id
return_id         BIGINT NOT NULL | return
new_order_id      BIGINT | replacement order
created_at        TIMESTAMP NOT NULL | time

== returns.return_policies | Return policy by country.
country_code      VARCHAR NOT NULL | country
window_days       INTEGER NOT NULL | days allowed
free_returns      BOOLEAN NOT NULL | free return shipping
valid_from        DATE NOT NULL | first day

== returns.returns_old | Returns.
!! DEPRECATED line-grain extract frozen at the 2024-06-30 cutover; refund values in USD at extract time. Nothing after the cutover.
return_id         BIGINT NOT NULL | return id
order_id          BIGINT NOT NULL | order
order_line_id     BIGINT NOT NULL | order line
product_id        INTEGER NOT NULL | product returned
units_returned    INTEGER NOT NULL | units
refund_usd        DECIMAL(14,2) | refund in USD
requested_date    DATE NOT NULL | request date
status            VARCHAR NOT NULL | status

############################################################################ marketing
== marketing.channels | Marketing channels.
marketing_channel_id INTEGER NOT NULL | id
channel_name      VARCHAR NOT NULL | channel
is_paid           BOOLEAN NOT NULL | paid media

== marketing.campaigns | Marketing campaigns.
campaign_id       INTEGER NOT NULL | id
campaign_name     VARCHAR NOT NULL | name
marketing_channel_id INTEGER NOT NULL | channel (marketing.channels)
country_code      VARCHAR NOT NULL | target market
start_date        DATE NOT NULL | first day
end_date          DATE NOT NULL | last day
budget_usd        DECIMAL(14,2) NOT NULL | approved budget in USD
status            VARCHAR NOT NULL | planned, active, completed, cancelled
objective         VARCHAR NOT NULL | awareness, acquisition, retention

== marketing.campaign_spend | Daily media spend by campaign.
!! spend_amount is in US cents (BIGINT), despite the comment.
campaign_id       INTEGER NOT NULL | campaign
spend_date        DATE NOT NULL | day
spend_amount      BIGINT NOT NULL | daily spend in USD !! STALE COMMENT: US cents since the ad-platform connector change
impressions       BIGINT NOT NULL | impressions
clicks            BIGINT NOT NULL | clicks

== marketing.attribution_touches | Marketing touchpoints per customer.
touch_id          BIGINT NOT NULL | id
customer_id       BIGINT NOT NULL | customer
campaign_id       INTEGER NOT NULL | campaign
touched_at        TIMESTAMP NOT NULL | time (UTC)
touch_type        VARCHAR NOT NULL | click or view

== marketing.order_attribution | Order credit by campaign under several attribution models.
!! CONTESTED: one row per order x campaign x model. Always filter on one model (last_touch, first_touch or linear) or credit is counted three times.
order_id          BIGINT NOT NULL | order
campaign_id       INTEGER NOT NULL | campaign credited
model             VARCHAR NOT NULL | last_touch, first_touch or linear
credit            DECIMAL(6,4) NOT NULL | share of the order credited (0-1)

== marketing.coupons | Coupon codes.
coupon_code       VARCHAR NOT NULL | code
campaign_id       INTEGER | campaign issuing it
discount_pct      DECIMAL(5,2) NOT NULL | percentage off
valid_from        DATE NOT NULL | first day
valid_to          DATE NOT NULL | last day

== marketing.coupon_redemptions | Coupon uses.
redemption_id     BIGINT NOT NULL | id
coupon_code       VARCHAR NOT NULL | coupon
order_id          BIGINT NOT NULL | order
customer_id       BIGINT NOT NULL | customer
redeemed_at       TIMESTAMP NOT NULL | time (UTC)

== marketing.email_sends | Marketing emails sent.
send_id           BIGINT NOT NULL | id
campaign_id       INTEGER NOT NULL | campaign
customer_id       BIGINT NOT NULL | recipient
sent_at           TIMESTAMP NOT NULL | time (UTC)

== marketing.email_events | Email engagement events from the ESP webhook.
!! Webhook retries duplicate events: dedupe on (send_id, event_type) or count distinct sends.
email_event_id    BIGINT NOT NULL | id
send_id           BIGINT NOT NULL | send
event_type        VARCHAR NOT NULL | open, click, unsubscribe, bounce
event_at          TIMESTAMP NOT NULL | time (UTC)

== marketing.audiences | Audience segments for targeting.
audience_id       INTEGER NOT NULL | id
audience_name     VARCHAR NOT NULL | name
created_date      DATE NOT NULL | created

== marketing.audience_members | Customers in audiences.
audience_id       INTEGER NOT NULL | audience
customer_id       BIGINT NOT NULL | customer
added_date        DATE NOT NULL | added

== marketing.utm_sources | UTM source mapping.
utm_source        VARCHAR NOT NULL | raw utm_source value
marketing_channel_id INTEGER NOT NULL | channel

== marketing.influencers | Influencer partners.
influencer_id     INTEGER NOT NULL | id
handle            VARCHAR NOT NULL | handle
platform          VARCHAR NOT NULL | platform
fee_usd           DECIMAL(12,2) NOT NULL | contract fee
campaign_id       INTEGER | campaign

== marketing.campaigns_v1 | Campaigns with spend totals.
!! DEPRECATED campaign table from the old marketing mart, frozen at the 2024-06-30 cutover: later campaigns are missing and spend of campaigns running at the cutover stops there.
campaign_id       INTEGER NOT NULL | id
campaign_name     VARCHAR NOT NULL | name
channel_name      VARCHAR NOT NULL | channel
start_date        DATE NOT NULL | start
end_date          DATE NOT NULL | end
total_spend_usd   DECIMAL(14,2) NOT NULL | total spend in USD
attributed_revenue_usd DECIMAL(14,2) | revenue attributed (last touch)

############################################################################ web
== web.users | Website / app accounts.
web_user_id       BIGINT NOT NULL | id
customer_id       BIGINT | linked customer, NULL if never purchased under this login
created_at        TIMESTAMP NOT NULL | registration (UTC)
is_test           BOOLEAN NOT NULL DEFAULT FALSE | QA account !! exclude
is_internal       BOOLEAN NOT NULL DEFAULT FALSE | employee account !! exclude from active-user metrics
deleted_at        TIMESTAMP | account deleted (soft delete)

== web.sessions | Web and app sessions.
!! Bot sessions are flagged, not removed. started_at is UTC.
session_id        BIGINT NOT NULL | id
web_user_id       BIGINT | logged-in user, NULL for anonymous sessions
started_at        TIMESTAMP NOT NULL | start (UTC)
duration_seconds  INTEGER NOT NULL | length
platform          VARCHAR NOT NULL | web or app
device_type       VARCHAR NOT NULL | desktop, mobile, tablet
country_code      VARCHAR NOT NULL | geo-IP country
utm_source        VARCHAR | campaign source
is_bot            BOOLEAN NOT NULL DEFAULT FALSE | crawler / bot traffic !! exclude

== web.events | Clickstream events.
!! At-least-once delivery: about 3% of events are ingested twice with a new event_id but the same event_uuid. Count distinct event_uuid.
event_id          BIGINT NOT NULL | row id
event_uuid        VARCHAR NOT NULL | client-side event id
session_id        BIGINT NOT NULL | session
web_user_id       BIGINT | user
event_type        VARCHAR NOT NULL | page_view, search, product_view, add_to_cart, checkout, purchase
event_ts          TIMESTAMP NOT NULL | time (UTC)
product_id        INTEGER | product for product events
ingested_at       TIMESTAMP NOT NULL | load time

== web.pages | Site pages.
page_id           INTEGER NOT NULL | id
url_path          VARCHAR NOT NULL | path
page_type         VARCHAR NOT NULL | home, category, product, cart, checkout, content

== web.page_views_daily | Page views per page and day.
view_date         DATE NOT NULL | day (UTC)
page_id           INTEGER NOT NULL | page
views             INTEGER NOT NULL | page views incl. bots
unique_visitors   INTEGER NOT NULL | visitors

== web.search_queries | Site search queries (sampled 10%).
search_id         BIGINT NOT NULL | id
session_id        BIGINT NOT NULL | session
query_text        VARCHAR NOT NULL | query
results_count     INTEGER NOT NULL | results
searched_at       TIMESTAMP NOT NULL | time

== web.experiments | A/B experiments.
experiment_id     INTEGER NOT NULL | id
experiment_name   VARCHAR NOT NULL | name
start_date        DATE NOT NULL | start
end_date          DATE | end
status            VARCHAR NOT NULL | running, concluded

== web.experiment_assignments | Users assigned to experiment variants.
experiment_id     INTEGER NOT NULL | experiment
web_user_id       BIGINT NOT NULL | user
variant           VARCHAR NOT NULL | control or treatment
assigned_at       TIMESTAMP NOT NULL | time

== web.active_users_daily | Daily active users.
!! Dashboard feed: counts every logged-in user with a session, including bots, test and internal accounts. Not a governed active-user metric.
activity_date     DATE NOT NULL | day (UTC)
active_users      INTEGER NOT NULL | distinct users with a session
sessions          INTEGER NOT NULL | sessions

== web.referrers | Referring domains.
referrer_id       INTEGER NOT NULL | id
domain            VARCHAR NOT NULL | domain
referrer_type     VARCHAR NOT NULL | search, social, partner, other

== web.app_installs | Mobile app installs.
install_id        BIGINT NOT NULL | id
web_user_id       BIGINT | user once logged in
os                VARCHAR NOT NULL | ios or android
installed_at      TIMESTAMP NOT NULL | time
uninstalled_at    TIMESTAMP | time

== web.user_consents | Cookie / tracking consent records.
consent_id        BIGINT NOT NULL | id
web_user_id       BIGINT NOT NULL | user
consent_type      VARCHAR NOT NULL | analytics, marketing
granted           BOOLEAN NOT NULL | granted or refused
recorded_at       TIMESTAMP NOT NULL | time

== web.product_views_daily | Product detail views per day.
view_date         DATE NOT NULL | day
product_id        INTEGER NOT NULL | product
views             INTEGER NOT NULL | views

== web.sessions_bak | Sessions.
!! DEPRECATED backup of web.sessions taken 2025-03-01 before the bot-filter rollout; no is_bot column, nothing after the backup.
session_id        BIGINT NOT NULL | id
web_user_id       BIGINT | user
started_at        TIMESTAMP NOT NULL | start
duration_seconds  INTEGER NOT NULL | length
platform          VARCHAR NOT NULL | platform
device_type       VARCHAR NOT NULL | device
country_code      VARCHAR NOT NULL | country

############################################################################ hr
== hr.departments | Departments.
department_id     INTEGER NOT NULL | id
department_name   VARCHAR NOT NULL | name
parent_department_id INTEGER | parent
cost_center_id    INTEGER | cost center

== hr.positions | Job positions.
position_id       INTEGER NOT NULL | id
title             VARCHAR NOT NULL | title
job_family        VARCHAR NOT NULL | family
grade             INTEGER NOT NULL | grade

== hr.employees | Employees (current record).
!! is_active has not been maintained since the HRIS cutover (2024-06-30); use hire_date / termination_date. Contractors are included.
employee_id       INTEGER NOT NULL | id
employee_code     VARCHAR NOT NULL | HR number
first_name        VARCHAR NOT NULL | first name
last_name         VARCHAR NOT NULL | last name
email             VARCHAR NOT NULL | work email
department_id     INTEGER NOT NULL | current department
position_id       INTEGER NOT NULL | current position
store_id          INTEGER | store for store staff
manager_id        INTEGER | line manager
country_code      VARCHAR NOT NULL | country of employment
employment_type   VARCHAR NOT NULL | full_time, part_time, contractor
hire_date         DATE NOT NULL | start date
termination_date  DATE | last day, NULL while employed
is_active         BOOLEAN NOT NULL | TRUE while employed !! STALE: not updated for terminations after 2024-06-30

== hr.employee_history | Employee job history (type-2).
!! SCD2 of department, position and salary.
employee_history_id BIGINT NOT NULL | id
employee_id       INTEGER NOT NULL | employee
department_id     INTEGER NOT NULL | department
position_id       INTEGER NOT NULL | position
salary_annual     DECIMAL(12,2) NOT NULL | annual salary in the employee's local currency
currency_code     VARCHAR NOT NULL | salary currency
valid_from        DATE NOT NULL | first day
valid_to          DATE NOT NULL | day the next version starts (exclusive), 9999-12-31 if current
is_current        BOOLEAN NOT NULL | current version

== hr.payroll | Monthly payroll by employee.
payroll_id        BIGINT NOT NULL | id
employee_id       INTEGER NOT NULL | employee
pay_month         DATE NOT NULL | first day of the month paid
gross_pay         DECIMAL(12,2) NOT NULL | gross pay in USD !! STALE COMMENT: local currency of the employee (see currency_code)
employer_taxes    DECIMAL(12,2) NOT NULL | employer contributions, same currency
currency_code     VARCHAR NOT NULL | currency

== hr.time_off | Leave taken.
time_off_id       BIGINT NOT NULL | id
employee_id       INTEGER NOT NULL | employee
leave_type        VARCHAR NOT NULL | vacation, sick, parental, unpaid
start_date        DATE NOT NULL | first day
days              DECIMAL(5,1) NOT NULL | working days

== hr.performance_reviews | Annual reviews.
review_id         BIGINT NOT NULL | id
employee_id       INTEGER NOT NULL | employee
review_year       INTEGER NOT NULL | year
rating            INTEGER NOT NULL | 1 (low) to 5 (high)
reviewer_id       INTEGER NOT NULL | reviewer

== hr.headcount_monthly | Monthly headcount by department (HR dashboard).
!! Counts contractors and people on notice; month-end snapshot. Not the governed headcount.
month_start       DATE NOT NULL | month
department_id     INTEGER NOT NULL | department
headcount         INTEGER NOT NULL | people

== hr.terminations | Employment terminations.
termination_id    INTEGER NOT NULL | id
employee_id       INTEGER NOT NULL | employee
termination_date  DATE NOT NULL | last day
reason            VARCHAR NOT NULL | reason
is_voluntary      BOOLEAN NOT NULL | resignation

== hr.store_assignments | Store staff assignments over time.
assignment_id     BIGINT NOT NULL | id
employee_id       INTEGER NOT NULL | employee
store_id          INTEGER NOT NULL | store
start_date        DATE NOT NULL | first day
end_date          DATE | last day

== hr.training_completions | Completed trainings.
completion_id     BIGINT NOT NULL | id
employee_id       INTEGER NOT NULL | employee
course_code       VARCHAR NOT NULL | course
completed_date    DATE NOT NULL | date
score             INTEGER | score

== hr.employees_old | Employees.
!! DEPRECATED HRIS export frozen at the 2024-06-30 cutover, with denormalized department names; nobody hired or terminated later is reflected.
employee_id       INTEGER NOT NULL | id
full_name         VARCHAR NOT NULL | name
department_name   VARCHAR NOT NULL | department
title             VARCHAR NOT NULL | title
country_code      VARCHAR NOT NULL | country
employment_type   VARCHAR NOT NULL | type
hire_date         DATE NOT NULL | start
status            VARCHAR NOT NULL | active or terminated

############################################################################ ops
== ops.dim_date | Calendar with the fiscal calendar (fiscal year starts February 1).
date_day          DATE NOT NULL | day
year              INTEGER NOT NULL | calendar year
quarter           INTEGER NOT NULL | calendar quarter
month             INTEGER NOT NULL | calendar month
day_of_week       INTEGER NOT NULL | ISO day of week (1 = Monday)
is_weekend        BOOLEAN NOT NULL | Saturday or Sunday
fiscal_year       INTEGER NOT NULL | fiscal year (named after the calendar year it starts in)
fiscal_quarter    INTEGER NOT NULL | fiscal quarter
fiscal_period     INTEGER NOT NULL | fiscal period 1-12 (1 = February)
is_holiday_us     BOOLEAN NOT NULL | US federal holiday or Black Friday

== ops.warehouses | Distribution centers.
warehouse_id      INTEGER NOT NULL | id
warehouse_name    VARCHAR NOT NULL | name
country_code      VARCHAR NOT NULL | country
is_third_party    BOOLEAN NOT NULL | operated by a 3PL

== ops.inventory_snapshots | Month-end inventory by product and warehouse.
snapshot_date     DATE NOT NULL | month-end day
warehouse_id      INTEGER NOT NULL | warehouse
product_id        INTEGER NOT NULL | product
on_hand_units     INTEGER NOT NULL | units on hand
reserved_units    INTEGER NOT NULL | units reserved for open orders

== ops.suppliers | Merchandise suppliers.
supplier_id       INTEGER NOT NULL | id
supplier_name     VARCHAR NOT NULL | name
country_code      VARCHAR NOT NULL | country
lead_time_days    INTEGER NOT NULL | contractual lead time

== ops.purchase_orders | Purchase orders to suppliers.
po_id             BIGINT NOT NULL | id
supplier_id       INTEGER NOT NULL | supplier
warehouse_id      INTEGER NOT NULL | destination
ordered_date      DATE NOT NULL | order date
expected_date     DATE NOT NULL | promised delivery
received_date     DATE | actual delivery
status            VARCHAR NOT NULL | open, received, cancelled

== ops.purchase_order_lines | Purchase order lines.
po_line_id        BIGINT NOT NULL | id
po_id             BIGINT NOT NULL | purchase order
product_id        INTEGER NOT NULL | product
quantity          INTEGER NOT NULL | units
unit_cost_usd     DECIMAL(10,2) NOT NULL | cost per unit

== ops.stock_movements | Inventory movements.
movement_id       BIGINT NOT NULL | id
warehouse_id      INTEGER NOT NULL | warehouse
product_id        INTEGER NOT NULL | product
movement_type     VARCHAR NOT NULL | receipt, pick, adjustment, transfer
quantity          INTEGER NOT NULL | signed units
moved_at          TIMESTAMP NOT NULL | time

== ops.carriers | Parcel carriers.
carrier_id        INTEGER NOT NULL | id
carrier_name      VARCHAR NOT NULL | name
service_level     VARCHAR NOT NULL | standard or express

== ops.store_hours | Opening hours (store-local time).
store_id          INTEGER NOT NULL | store
day_of_week       INTEGER NOT NULL | ISO day of week
opens_at          TIME NOT NULL | opening (local)
closes_at         TIME NOT NULL | closing (local)

== ops.shipment_tracking | Carrier tracking scans (2025 onwards).
tracking_event_id BIGINT NOT NULL | id
shipment_id       BIGINT NOT NULL | shipment
scan_type         VARCHAR NOT NULL | picked_up, in_transit, out_for_delivery, delivered
scanned_at        TIMESTAMP NOT NULL | time (UTC)

== ops.product_costs | Unit cost of products (type-2).
product_cost_id   BIGINT NOT NULL | id
product_id        INTEGER NOT NULL | product
unit_cost_usd     DECIMAL(10,2) NOT NULL | landed cost per unit
valid_from        DATE NOT NULL | first day
valid_to          DATE NOT NULL | next version start (exclusive), 9999-12-31 if current

== ops.etl_runs | Pipeline run log.
run_id            BIGINT NOT NULL | id
job_name          VARCHAR NOT NULL | job
target_table      VARCHAR NOT NULL | table loaded
started_at        TIMESTAMP NOT NULL | start (UTC)
finished_at       TIMESTAMP NOT NULL | end
rows_loaded       BIGINT NOT NULL | rows
status            VARCHAR NOT NULL | success or failed

== ops.data_quality_issues | Known data quality issues.
issue_id          INTEGER NOT NULL | id
table_name        VARCHAR NOT NULL | table
description       VARCHAR NOT NULL | what is wrong
opened_date       DATE NOT NULL | reported
resolved_date     DATE | fixed

== ops.inventory_snapshots_old | Inventory snapshots with valuation.
!! DEPRECATED: frozen at the 2024-06-30 cutover; on-hand units match ops.inventory_snapshots up to then.
snapshot_date     DATE NOT NULL | month-end
warehouse_id      INTEGER NOT NULL | warehouse
product_id        INTEGER NOT NULL | product
on_hand_units     INTEGER NOT NULL | units
on_hand_value_usd DECIMAL(14,2) NOT NULL | units x unit cost at snapshot time

############################################################################ legacy
== legacy.customers | CRM customer export.
!! DEPRECATED (legacy schema): CRM export frozen at the 2024-06-30 cutover, old segment codes.
cust_no           BIGINT NOT NULL | customer number
full_name         VARCHAR | name
email             VARCHAR | email
country           VARCHAR NOT NULL | country
segment_code      VARCHAR NOT NULL | C, P or B
created           DATE NOT NULL | signup date

== legacy.orders | Orders (legacy ERP).
!! DEPRECATED (legacy schema): legacy ERP order headers, up to the cutover only.
order_no          BIGINT NOT NULL | order number
cust_no           BIGINT NOT NULL | customer number
order_dt          DATE NOT NULL | order date
store_no          INTEGER NOT NULL | store
order_status      VARCHAR NOT NULL | C (complete) or X (cancelled)
order_total_usd   DECIMAL(14,2) NOT NULL | order total in USD

== legacy.order_items | Order items (legacy ERP).
!! DEPRECATED (legacy schema).
order_no          BIGINT NOT NULL | order number
item_no           INTEGER NOT NULL | line
product_no        INTEGER NOT NULL | product
qty               INTEGER NOT NULL | units
net_usd           DECIMAL(14,2) NOT NULL | net amount in USD

== legacy.revenue_daily | Daily revenue.
!! DEPRECATED (legacy schema): daily revenue computed like the canonical metric up to 2024-06-30 (coincides), never loaded since.
revenue_date      DATE NOT NULL | day
store_no          INTEGER NOT NULL | store
revenue_usd       DECIMAL(14,2) NOT NULL | revenue

== legacy.web_visits | Daily web visits.
!! DEPRECATED (legacy schema).
visit_date        DATE NOT NULL | day
visits            INTEGER NOT NULL | sessions
visitors          INTEGER NOT NULL | distinct users

== legacy.kpi_active_users | Monthly active users KPI.
!! DEPRECATED (legacy schema) but still loaded by a zombie job: distinct logged-in users with any session in the calendar month, bots, test and internal accounts included.
kpi_month         DATE NOT NULL | month
active_users      INTEGER NOT NULL | monthly active users

== legacy.products | Product master (legacy).
!! DEPRECATED (legacy schema).
product_no        INTEGER NOT NULL | product number
description       VARCHAR NOT NULL | name
category          VARCHAR NOT NULL | old category name
price_usd         DECIMAL(10,2) NOT NULL | price at extract

== legacy.fx_rates_manual | Month-end FX rates maintained by hand.
!! DEPRECATED (legacy schema).
month_end         DATE NOT NULL | month-end
currency          VARCHAR NOT NULL | currency
rate              DECIMAL(12,6) NOT NULL | USD per unit

== legacy.stores | Store list (legacy).
!! DEPRECATED (legacy schema).
store_no          INTEGER NOT NULL | store
store_name        VARCHAR NOT NULL | name
region            VARCHAR NOT NULL | region name

== legacy.returns | Returns (legacy ERP).
!! DEPRECATED (legacy schema).
rma_no            BIGINT NOT NULL | return number
order_no          BIGINT NOT NULL | order
rma_date          DATE NOT NULL | date
refund_usd        DECIMAL(14,2) | refund

== legacy.employees | Employee list (legacy payroll system).
!! DEPRECATED (legacy schema).
emp_no            INTEGER NOT NULL | employee number
name              VARCHAR NOT NULL | name
dept              VARCHAR NOT NULL | department
active_flag       VARCHAR NOT NULL | Y or N

== legacy.campaign_results | Campaign results (old marketing mart).
!! DEPRECATED (legacy schema).
campaign_id       INTEGER NOT NULL | campaign
spend_usd         DECIMAL(14,2) NOT NULL | spend
orders            INTEGER NOT NULL | attributed orders
revenue_usd       DECIMAL(14,2) NOT NULL | attributed revenue

== legacy.gl_balances | GL balances (legacy finance system).
!! DEPRECATED (legacy schema).
period            VARCHAR NOT NULL | yyyy-mm
account           INTEGER NOT NULL | account
balance_usd       DECIMAL(16,2) NOT NULL | balance

== legacy.aov_monthly | Average order value by month.
!! DEPRECATED (legacy schema): gross AOV (incl. tax, shipping, cancelled orders and test accounts), up to the cutover only.
month             DATE NOT NULL | month
orders            INTEGER NOT NULL | orders
aov_usd           DECIMAL(12,2) NOT NULL | average order value
"""


def _parse(text: str) -> list[Table]:
    tables: list[Table] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("=="):
            name, _, comment = line[2:].partition("|")
            schema, _, table = name.strip().partition(".")
            tables.append(Table(schema, table, comment.strip()))
        elif line.startswith("!!"):
            tables[-1].traps.append(line[2:].strip())
        else:
            left, _, right = line.partition("|")
            comment, _, trap = right.partition("!!")
            name, _, ddl = left.strip().partition(" ")
            tables[-1].columns.append(Column(name, " ".join(ddl.split()), comment.strip(), trap.strip()))
    return tables


TABLES: list[Table] = _parse(_SPEC)


def deprecated(table: Table) -> bool:
    """The legacy graveyard: ``legacy.*`` and ``*_old``, ``*_v1``, ``*_bak``."""
    return table.schema == "legacy" or table.name.endswith(("_old", "_v1", "_bak"))
