"""Write the demo gold set, labelling/data/demo_gold.jsonl, over the demo warehouse.

Run: ``.venv/bin/python labelling/data/build_demo_gold.py``. The output is deterministic.

Conventions the labels rely on (a labeller would read them in the warehouse notes):

- "revenue" means the ``order_total`` of *completed* orders; "net sales" of a product or
  category means ``quantity * unit_price * (1 - discount)`` over lines of completed orders;
- "orders" with no status named means orders of any status;
- customers without a region are reported as ``Unknown`` when the question asks for all
  customers or all revenue.

Every SQL text is portable: it runs and returns the same rows on SQLite and PostgreSQL
(no date functions beyond ``SUBSTR(CAST(d AS TEXT), ...)``, strict GROUP BY, LIMIT only
with a total order, ROUND only on NUMERIC expressions).
"""

import json
import random
from pathlib import Path

OUTPUT = Path(__file__).with_name("demo_gold.jsonl")
SHUFFLE_SEED = 20240602

REGIONS = ["Northeast", "Southeast", "Midwest", "West", "Ontario", "Quebec", "British Isles", "Bavaria"]
COUNTRIES = ["US", "CA", "UK", "DE"]
CATEGORIES = ["Electronics", "Home", "Books", "Toys", "Sports", "Beauty", "Grocery"]
STATUSES = ["completed", "pending", "cancelled", "refunded"]
CARRIERS = ["UPS", "FedEx", "DHL", "USPS"]
METHODS = ["card", "paypal", "gift_card", "bank_transfer"]
YEARS = [2023, 2024]
NET = "oi.quantity * oi.unit_price * (1 - oi.discount)"
COMPLETED_2024 = "o.status = 'completed' AND o.order_date >= '2024-01-01' AND o.order_date < '2025-01-01'"
MONTH = "SUBSTR(CAST(o.order_date AS TEXT), 1, 7)"
YEAR = "SUBSTR(CAST(o.order_date AS TEXT), 1, 4)"


def in_year(column: str, year: int) -> str:
    return f"{column} >= '{year}-01-01' AND {column} < '{year + 1}-01-01'"


def sql(text: str) -> str:
    """Collapse a SQL text to one line with single spaces (the file stays one item per line)."""
    return " ".join(text.split())


correct: list[dict] = []
wrong: list[dict] = []
# SQL texts of correct items whose one-to-many join is legitimate (not a fan-out bug).
legit_one_to_many: set[str] = set()


def ok(question: str, text: str, *, one_to_many: bool = False) -> None:
    correct.append({"question": question, "sql": sql(text)})
    if one_to_many:
        legit_one_to_many.add(sql(text))


def bad(error_class: str, question: str, text: str, reference: str) -> None:
    wrong.append({"question": question, "sql": sql(text), "error_class": error_class, "reference_sql": sql(reference)})


# --- Correct items: families over the warehouse's dimensions ---------------------------

for region in REGIONS:
    ok(
        f"How many customers live in the {region} region?",
        f"""SELECT COUNT(*) AS customers FROM customers c JOIN regions r ON r.region_id = c.region_id
            WHERE r.region_name = '{region}'""",
    )
    ok(
        f"What was the completed revenue from customers in the {region} region?",
        f"""SELECT SUM(o.order_total) AS revenue FROM orders o JOIN customers c ON c.customer_id = o.customer_id
            JOIN regions r ON r.region_id = c.region_id
            WHERE r.region_name = '{region}' AND o.status = 'completed'""",
    )

for status in STATUSES:
    for year in YEARS:
        ok(
            f"How many {status} orders were placed in {year}?",
            f"SELECT COUNT(*) AS orders FROM orders o WHERE o.status = '{status}' AND {in_year('o.order_date', year)}",
        )
    ok(
        f"What is the total value of all {status} orders?",
        f"SELECT SUM(order_total) AS total_value FROM orders WHERE status = '{status}'",
    )

for carrier in CARRIERS:
    ok(
        f"How many shipments did {carrier} carry?",
        f"SELECT COUNT(*) AS shipments FROM shipments WHERE carrier = '{carrier}'",
    )
    ok(
        f"How many orders had at least one {carrier} shipment go out in 2024?",
        f"""SELECT COUNT(DISTINCT s.order_id) AS orders FROM shipments s
            WHERE s.carrier = '{carrier}' AND {in_year("s.shipped_at", 2024)}""",
    )

for method in METHODS:
    ok(
        f"How much was paid by {method} for completed orders?",
        f"""SELECT SUM(p.amount) AS paid FROM payments p JOIN orders o ON o.order_id = p.order_id
            WHERE o.status = 'completed' AND p.method = '{method}'""",
    )
    ok(
        f"How many payments were made with {method}?",
        f"SELECT COUNT(*) AS payments FROM payments WHERE method = '{method}'",
    )

for category in CATEGORIES:
    ok(
        f"What were the net sales of {category} products on completed orders?",
        f"""SELECT SUM({NET}) AS net_sales FROM order_items oi
            JOIN orders o ON o.order_id = oi.order_id JOIN products p ON p.product_id = oi.product_id
            WHERE o.status = 'completed' AND p.category = '{category}'""",
    )
    ok(
        f"How many {category} units were sold on completed orders in 2024?",
        f"""SELECT SUM(oi.quantity) AS units FROM order_items oi
            JOIN orders o ON o.order_id = oi.order_id JOIN products p ON p.product_id = oi.product_id
            WHERE o.status = 'completed' AND p.category = '{category}' AND {in_year("o.order_date", 2024)}""",
    )
    ok(
        f"How many active products are in the {category} category?",
        f"SELECT COUNT(*) AS active_products FROM products WHERE category = '{category}' AND is_active",
    )

for year in YEARS:
    ok(
        f"What was the completed revenue in {year}?",
        f"""SELECT SUM(o.order_total) AS revenue FROM orders o
            WHERE o.status = 'completed' AND {in_year("o.order_date", year)}""",
    )
    ok(
        f"What was the average completed order value in {year}?",
        f"""SELECT ROUND(AVG(o.order_total), 2) AS average_order_value FROM orders o
            WHERE o.status = 'completed' AND {in_year("o.order_date", year)}""",
    )
    ok(
        f"How many distinct customers placed an order in {year}?",
        f"SELECT COUNT(DISTINCT o.customer_id) AS customers FROM orders o WHERE {in_year('o.order_date', year)}",
    )
    ok(
        f"Show completed revenue per month in {year}.",
        f"""SELECT {MONTH} AS month, SUM(o.order_total) AS revenue FROM orders o
            WHERE o.status = 'completed' AND {in_year("o.order_date", year)} GROUP BY 1 ORDER BY 1""",
    )
    ok(
        f"Which 5 products sold the most units on completed orders in {year}?",
        f"""SELECT p.product_id, p.product_name, SUM(oi.quantity) AS units FROM order_items oi
            JOIN orders o ON o.order_id = oi.order_id JOIN products p ON p.product_id = oi.product_id
            WHERE o.status = 'completed' AND {in_year("o.order_date", year)}
            GROUP BY p.product_id, p.product_name ORDER BY units DESC, p.product_id LIMIT 5""",
    )
    ok(
        f"Who were the top 10 customers by completed revenue in {year}?",
        f"""SELECT c.customer_id, c.customer_name, SUM(o.order_total) AS revenue FROM orders o
            JOIN customers c ON c.customer_id = o.customer_id
            WHERE o.status = 'completed' AND {in_year("o.order_date", year)}
            GROUP BY c.customer_id, c.customer_name ORDER BY revenue DESC, c.customer_id LIMIT 10""",
    )
    ok(
        f"Which carrier shipped the most parcels in {year}?",
        f"""SELECT s.carrier, COUNT(*) AS parcels FROM shipments s WHERE {in_year("s.shipped_at", year)}
            GROUP BY s.carrier ORDER BY parcels DESC, s.carrier LIMIT 1""",
    )
    ok(
        f"What was the best sales day of {year} by completed revenue?",
        f"""SELECT sales_date, revenue FROM daily_sales WHERE {in_year("sales_date", year)}
            ORDER BY revenue DESC, sales_date LIMIT 1""",
    )

for year in [2021, 2022, 2023, 2024]:
    ok(
        f"How many customers signed up in {year}?",
        f"SELECT COUNT(*) AS signups FROM customers WHERE {in_year('signup_date', year)}",
    )

for country in COUNTRIES:
    ok(
        f"How many customers do we have in {country}?",
        f"""SELECT COUNT(*) AS customers FROM customers c JOIN regions r ON r.region_id = c.region_id
            WHERE r.country = '{country}'""",
    )
    ok(
        f"What was the completed revenue from {country} customers in 2024?",
        f"""SELECT SUM(o.order_total) AS revenue FROM orders o JOIN customers c ON c.customer_id = o.customer_id
            JOIN regions r ON r.region_id = c.region_id
            WHERE r.country = '{country}' AND o.status = 'completed' AND {in_year("o.order_date", 2024)}""",
    )

QUARTERS = {1: ("01-01", "04-01"), 2: ("04-01", "07-01"), 3: ("07-01", "10-01"), 4: ("10-01", None)}
for year in YEARS:
    for quarter, (start, end) in QUARTERS.items():
        end_date = f"{year}-{end}" if end else f"{year + 1}-01-01"
        ok(
            f"What was the completed revenue in Q{quarter} {year}?",
            f"""SELECT SUM(order_total) AS revenue FROM orders WHERE status = 'completed'
                AND order_date >= '{year}-{start}' AND order_date < '{end_date}'""",
        )

# --- Correct items: one of a kind --------------------------------------------------------

ok("How many customers do we have?", "SELECT COUNT(*) AS customers FROM customers")
ok("How many customers have no region on file?", "SELECT COUNT(*) AS customers FROM customers WHERE region_id IS NULL")
ok("List the regions and their countries.", "SELECT region_name, country FROM regions ORDER BY region_name")
ok(
    "How many products are in each category?",
    "SELECT category, COUNT(*) AS products FROM products GROUP BY category ORDER BY category",
)
ok("Which products are inactive?", "SELECT product_name, category FROM products WHERE NOT is_active")
ok(
    "What is the average list price in each category?",
    "SELECT category, ROUND(AVG(list_price), 2) AS average_list_price FROM products GROUP BY category",
)
ok(
    "What is the most expensive product by list price?",
    "SELECT product_name, list_price FROM products ORDER BY list_price DESC, product_id LIMIT 1",
)
ok("How many orders are there in each status?", "SELECT status, COUNT(*) AS orders FROM orders GROUP BY status")
ok(
    "What percentage of all orders were cancelled?",
    """SELECT ROUND(100.0 * SUM(CASE WHEN status = 'cancelled' THEN 1 ELSE 0 END) / COUNT(*), 2) AS cancelled_pct
       FROM orders""",
)
ok(
    "What was the cancellation rate in each year?",
    f"""SELECT {YEAR} AS year,
            ROUND(100.0 * SUM(CASE WHEN o.status = 'cancelled' THEN 1 ELSE 0 END) / COUNT(*), 2) AS cancelled_pct
        FROM orders o GROUP BY 1 ORDER BY 1""",
)
ok(
    "How many orders of any status were placed each month in 2024?",
    f"SELECT {MONTH} AS month, COUNT(*) AS orders FROM orders o WHERE {in_year('o.order_date', 2024)} GROUP BY 1",
)
ok(
    "Which customers placed more than 9 orders?",
    """SELECT c.customer_id, c.customer_name, COUNT(*) AS orders FROM customers c
       JOIN orders o ON o.customer_id = c.customer_id
       GROUP BY c.customer_id, c.customer_name HAVING COUNT(*) > 9""",
    one_to_many=True,
)
ok(
    "Which customers have never placed an order?",
    """SELECT c.customer_id, c.customer_name FROM customers c
       WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.customer_id)""",
)
ok(
    "How many line items does each order placed on 2024-12-24 have?",
    """SELECT o.order_id, COUNT(oi.order_item_id) AS line_items FROM orders o
       JOIN order_items oi ON oi.order_id = o.order_id
       WHERE o.order_date = '2024-12-24' GROUP BY o.order_id""",
    one_to_many=True,
)
ok(
    "List the shipments (carrier and ship date) of orders placed between 2024-12-01 and 2024-12-07.",
    """SELECT o.order_id, o.order_date, s.carrier, s.shipped_at FROM orders o
       JOIN shipments s ON s.order_id = o.order_id
       WHERE o.order_date BETWEEN '2024-12-01' AND '2024-12-07'""",
    one_to_many=True,
)
ok(
    "Which orders placed in 2024 went out in more than one shipment, and in how many?",
    f"""SELECT o.order_id, COUNT(s.shipment_id) AS shipments FROM orders o
        JOIN shipments s ON s.order_id = o.order_id
        WHERE {in_year("o.order_date", 2024)} GROUP BY o.order_id HAVING COUNT(s.shipment_id) > 1""",
    one_to_many=True,
)
ok(
    "Which orders were paid with more than one payment, how many payments, and how much in total?",
    """SELECT p.order_id, COUNT(*) AS payments, SUM(p.amount) AS paid FROM payments p
       GROUP BY p.order_id HAVING COUNT(*) > 1""",
)
ok(
    "On average, how many shipments does a shipped order have?",
    "SELECT ROUND(COUNT(*) * 1.0 / COUNT(DISTINCT order_id), 2) AS shipments_per_order FROM shipments",
)
ok(
    "How many distinct customers have paid by paypal at least once?",
    """SELECT COUNT(DISTINCT o.customer_id) AS customers FROM orders o
       JOIN payments p ON p.order_id = o.order_id WHERE p.method = 'paypal'""",
    one_to_many=True,
)
ok(
    "What is the total value of completed orders that were shipped at least partly by DHL?",
    """SELECT SUM(o.order_total) AS total_value FROM orders o WHERE o.status = 'completed'
       AND o.order_id IN (SELECT s.order_id FROM shipments s WHERE s.carrier = 'DHL')""",
)
ok(
    "Break down completed revenue by region, with customers without a region as Unknown.",
    """SELECT COALESCE(r.region_name, 'Unknown') AS region, SUM(o.order_total) AS revenue FROM orders o
       JOIN customers c ON c.customer_id = o.customer_id LEFT JOIN regions r ON r.region_id = c.region_id
       WHERE o.status = 'completed' GROUP BY 1""",
)
ok(
    "Break down completed revenue by country, with customers without a region as Unknown.",
    """SELECT COALESCE(r.country, 'Unknown') AS country, SUM(o.order_total) AS revenue FROM orders o
       JOIN customers c ON c.customer_id = o.customer_id LEFT JOIN regions r ON r.region_id = c.region_id
       WHERE o.status = 'completed' GROUP BY 1""",
)
ok(
    "What is the average completed order value per region (Unknown for customers without a region)?",
    """SELECT COALESCE(r.region_name, 'Unknown') AS region, ROUND(AVG(o.order_total), 2) AS average_order_value
       FROM orders o JOIN customers c ON c.customer_id = o.customer_id
       LEFT JOIN regions r ON r.region_id = c.region_id WHERE o.status = 'completed' GROUP BY 1""",
)
ok(
    "Who are the 10 customers with the most completed orders?",
    """SELECT o.customer_id, COUNT(*) AS completed_orders FROM orders o WHERE o.status = 'completed'
       GROUP BY o.customer_id ORDER BY completed_orders DESC, o.customer_id LIMIT 10""",
)
ok(
    "Rank products by net sales on completed orders within each category.",
    f"""SELECT p.category, p.product_name, SUM({NET}) AS net_sales,
            RANK() OVER (PARTITION BY p.category ORDER BY SUM({NET}) DESC) AS category_rank
        FROM order_items oi JOIN orders o ON o.order_id = oi.order_id
        JOIN products p ON p.product_id = oi.product_id WHERE o.status = 'completed'
        GROUP BY p.category, p.product_id, p.product_name""",
)
ok(
    "What is the best-selling product by units in each category (completed orders)?",
    """WITH units AS (
           SELECT p.category, p.product_id, p.product_name, SUM(oi.quantity) AS units
           FROM order_items oi JOIN orders o ON o.order_id = oi.order_id
           JOIN products p ON p.product_id = oi.product_id WHERE o.status = 'completed'
           GROUP BY p.category, p.product_id, p.product_name),
       ranked AS (
           SELECT units.*, ROW_NUMBER() OVER (PARTITION BY category ORDER BY units DESC, product_id) AS position
           FROM units)
       SELECT category, product_name, units FROM ranked WHERE position = 1""",
)
ok(
    "Show the running total of completed revenue by month in 2024.",
    f"""WITH monthly AS (
            SELECT {MONTH} AS month, SUM(o.order_total) AS revenue FROM orders o
            WHERE o.status = 'completed' AND {in_year("o.order_date", 2024)} GROUP BY 1)
        SELECT month, revenue, SUM(revenue) OVER (ORDER BY month) AS running_revenue FROM monthly""",
)
ok(
    "How did the number of completed orders change from month to month in 2024?",
    f"""WITH monthly AS (
            SELECT {MONTH} AS month, COUNT(*) AS orders FROM orders o
            WHERE o.status = 'completed' AND {in_year("o.order_date", 2024)} GROUP BY 1)
        SELECT month, orders, orders - LAG(orders) OVER (ORDER BY month) AS change FROM monthly""",
)
ok(
    "How many units of each product were sold on completed orders?",
    """SELECT p.product_id, p.product_name, SUM(oi.quantity) AS units FROM order_items oi
       JOIN orders o ON o.order_id = oi.order_id JOIN products p ON p.product_id = oi.product_id
       WHERE o.status = 'completed' GROUP BY p.product_id, p.product_name""",
)
ok(
    "How much did discounts reduce sales on completed orders in 2024?",
    f"""SELECT SUM(oi.quantity * oi.unit_price * oi.discount) AS discount_amount FROM order_items oi
        JOIN orders o ON o.order_id = oi.order_id WHERE o.status = 'completed' AND {in_year("o.order_date", 2024)}""",
)
ok(
    "What is the average discount rate on lines that had a discount?",
    "SELECT ROUND(AVG(discount), 4) AS average_discount FROM order_items WHERE discount > 0",
)
ok(
    "How many order lines were sold below the product's list price?",
    """SELECT COUNT(*) AS lines_below_list FROM order_items oi JOIN products p ON p.product_id = oi.product_id
       WHERE oi.unit_price < p.list_price""",
)
ok(
    "Which products sell on average below their list price?",
    """SELECT p.product_id, p.product_name, p.list_price, ROUND(AVG(oi.unit_price), 2) AS average_unit_price
       FROM products p JOIN order_items oi ON oi.product_id = p.product_id
       GROUP BY p.product_id, p.product_name, p.list_price HAVING AVG(oi.unit_price) < p.list_price""",
    one_to_many=True,
)
ok(
    "For orders paid in several payments, show the order total next to the sum of payments.",
    """SELECT o.order_id, o.order_total, paid.total_paid, paid.payments FROM orders o
       JOIN (SELECT order_id, SUM(amount) AS total_paid, COUNT(*) AS payments FROM payments
             GROUP BY order_id HAVING COUNT(*) > 1) paid ON paid.order_id = o.order_id""",
)
ok(
    "How many payments and how much money went through each payment method?",
    "SELECT method, COUNT(*) AS payments, SUM(amount) AS amount FROM payments GROUP BY method",
)
ok(
    "What share of the money paid on completed orders came through each method?",
    """SELECT p.method, ROUND(100.0 * SUM(p.amount) / (SELECT SUM(p2.amount) FROM payments p2
           JOIN orders o2 ON o2.order_id = p2.order_id WHERE o2.status = 'completed'), 2) AS share_pct
       FROM payments p JOIN orders o ON o.order_id = p.order_id WHERE o.status = 'completed' GROUP BY p.method""",
)
ok(
    "How many customers who signed up in 2024 also ordered in 2024?",
    f"""SELECT COUNT(*) AS customers FROM customers c WHERE {in_year("c.signup_date", 2024)}
        AND EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.customer_id AND {in_year("o.order_date", 2024)})""",
)
ok(
    "How many customers signed up each year?",
    """SELECT SUBSTR(CAST(signup_date AS TEXT), 1, 4) AS signup_year, COUNT(*) AS customers
       FROM customers GROUP BY 1 ORDER BY 1""",
)
ok(
    "On average, how many orders has a customer who ordered at least once placed?",
    """SELECT ROUND(AVG(orders), 2) AS orders_per_customer FROM (
           SELECT customer_id, COUNT(*) AS orders FROM orders GROUP BY customer_id) per_customer""",
)
ok(
    "How many orders did each region place in 2024 (Unknown for customers without a region)?",
    f"""SELECT COALESCE(r.region_name, 'Unknown') AS region, COUNT(*) AS orders FROM orders o
        JOIN customers c ON c.customer_id = o.customer_id LEFT JOIN regions r ON r.region_id = c.region_id
        WHERE {in_year("o.order_date", 2024)} GROUP BY 1""",
)
ok(
    "On which days of 2024 were there at least 6 completed orders?",
    f"SELECT sales_date, orders_count FROM daily_sales WHERE orders_count >= 6 AND {in_year('sales_date', 2024)}",
)
ok(
    "What was the completed revenue in 2024 according to the daily sales table?",
    f"SELECT SUM(revenue) AS revenue FROM daily_sales WHERE {in_year('sales_date', 2024)}",
)
ok(
    "What was the average completed order value in 2024, computed from daily sales?",
    f"""SELECT ROUND(SUM(revenue) / SUM(orders_count), 2) AS average_order_value FROM daily_sales
        WHERE {in_year("sales_date", 2024)}""",
)
ok(
    "How many pending orders were placed before December 2024?",
    "SELECT COUNT(*) AS orders FROM orders WHERE status = 'pending' AND order_date < '2024-12-01'",
)
ok(
    "How many pending orders already have a payment?",
    """SELECT COUNT(*) AS orders FROM orders o WHERE o.status = 'pending'
       AND EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.order_id)""",
)
ok(
    "How much was refunded each year?",
    f"SELECT {YEAR} AS year, SUM(o.order_total) AS refunded FROM orders o WHERE o.status = 'refunded' GROUP BY 1",
)
ok(
    "What share of units sold in each category ended up refunded?",
    """SELECT p.category, ROUND(100.0 * SUM(CASE WHEN o.status = 'refunded' THEN oi.quantity ELSE 0 END)
           / SUM(oi.quantity), 2) AS refunded_units_pct
       FROM order_items oi JOIN orders o ON o.order_id = oi.order_id
       JOIN products p ON p.product_id = oi.product_id WHERE o.status IN ('completed', 'refunded')
       GROUP BY p.category""",
)
ok(
    "Which carrier carries the most parcels in each region?",
    """WITH parcels AS (
           SELECT r.region_name, s.carrier, COUNT(*) AS parcels FROM shipments s
           JOIN orders o ON o.order_id = s.order_id JOIN customers c ON c.customer_id = o.customer_id
           JOIN regions r ON r.region_id = c.region_id GROUP BY r.region_name, s.carrier)
       SELECT region_name, carrier, parcels FROM (
           SELECT parcels.*, ROW_NUMBER() OVER (PARTITION BY region_name ORDER BY parcels DESC, carrier) AS position
           FROM parcels) ranked WHERE position = 1""",
)
ok(
    "How many parcels did each carrier ship per year?",
    """SELECT SUBSTR(CAST(shipped_at AS TEXT), 1, 4) AS year, carrier, COUNT(*) AS parcels FROM shipments
       GROUP BY 1, 2""",
)
ok(
    "How many orders were split across more than one carrier?",
    """SELECT COUNT(*) AS orders FROM (SELECT order_id FROM shipments GROUP BY order_id
       HAVING COUNT(DISTINCT carrier) > 1) multi_carrier""",
)
ok(
    "What is the average number of units per completed order?",
    """SELECT ROUND(AVG(units), 2) AS units_per_order FROM (
           SELECT oi.order_id, SUM(oi.quantity) AS units FROM order_items oi
           JOIN orders o ON o.order_id = oi.order_id WHERE o.status = 'completed' GROUP BY oi.order_id) per_order""",
)
ok(
    "How many different products does an order contain on average?",
    """SELECT ROUND(AVG(lines), 2) AS products_per_order FROM (
           SELECT order_id, COUNT(DISTINCT product_id) AS lines FROM order_items GROUP BY order_id) per_order""",
)
ok(
    "Which customers have spent more than 2500 on completed orders?",
    """SELECT o.customer_id, SUM(o.order_total) AS spent FROM orders o WHERE o.status = 'completed'
       GROUP BY o.customer_id HAVING SUM(o.order_total) > 2500""",
)
ok(
    "What are the email addresses of our 5 biggest customers by completed revenue?",
    """SELECT c.customer_name, c.email FROM customers c JOIN (
           SELECT customer_id, SUM(order_total) AS spent FROM orders WHERE status = 'completed'
           GROUP BY customer_id ORDER BY spent DESC, customer_id LIMIT 5) top ON top.customer_id = c.customer_id""",
)
ok(
    "Which customers have bought products from at least 6 different categories (completed orders)?",
    """SELECT o.customer_id, COUNT(DISTINCT p.category) AS categories FROM orders o
       JOIN order_items oi ON oi.order_id = o.order_id JOIN products p ON p.product_id = oi.product_id
       WHERE o.status = 'completed' GROUP BY o.customer_id HAVING COUNT(DISTINCT p.category) >= 6""",
    one_to_many=True,
)
ok(
    "When did each customer in Bavaria place their first order?",
    """SELECT c.customer_id, c.customer_name, MIN(o.order_date) AS first_order FROM customers c
       JOIN regions r ON r.region_id = c.region_id JOIN orders o ON o.customer_id = c.customer_id
       WHERE r.region_name = 'Bavaria' GROUP BY c.customer_id, c.customer_name""",
)
ok(
    "Which inactive products were still sold on completed orders in 2024, and how many units?",
    f"""SELECT p.product_name, SUM(oi.quantity) AS units FROM products p
        JOIN order_items oi ON oi.product_id = p.product_id JOIN orders o ON o.order_id = oi.order_id
        WHERE NOT p.is_active AND {COMPLETED_2024} GROUP BY p.product_id, p.product_name""",
    one_to_many=True,
)
ok(
    "What share of orders had at least one discounted line?",
    """SELECT ROUND(100.0 * COUNT(DISTINCT oi.order_id) / (SELECT COUNT(*) FROM orders), 2) AS discounted_pct
       FROM order_items oi WHERE oi.discount > 0""",
)
ok(
    "What was the completed revenue from orders with more than 3 lines?",
    """SELECT SUM(o.order_total) AS revenue FROM orders o WHERE o.status = 'completed'
       AND (SELECT COUNT(*) FROM order_items oi WHERE oi.order_id = o.order_id) > 3""",
)
ok(
    "What was the largest single completed order?",
    "SELECT order_id, order_total FROM orders WHERE status = 'completed' ORDER BY order_total DESC, order_id LIMIT 1",
)
ok(
    "How many orders worth more than 500 are there in each status?",
    "SELECT status, COUNT(*) AS orders FROM orders WHERE order_total > 500 GROUP BY status",
)
ok(
    "For each region, how many customers are there and how many of them ordered in 2024?",
    f"""SELECT r.region_name, COUNT(DISTINCT c.customer_id) AS customers,
            COUNT(DISTINCT CASE WHEN {in_year("o.order_date", 2024)} THEN c.customer_id END) AS ordered_2024
        FROM regions r JOIN customers c ON c.region_id = r.region_id
        LEFT JOIN orders o ON o.customer_id = c.customer_id GROUP BY r.region_name""",
    one_to_many=True,
)
ok(
    "What is the average payment amount for each method?",
    "SELECT method, ROUND(AVG(amount), 2) AS average_amount FROM payments GROUP BY method",
)
ok(
    "How many orders were shipped on the day they were placed?",
    "SELECT COUNT(*) AS orders FROM orders WHERE shipped_date = order_date",
)
ok(
    "List UK customers with their number of completed orders, including those with none.",
    """SELECT c.customer_id, c.customer_name, COUNT(o.order_id) AS completed_orders FROM customers c
       JOIN regions r ON r.region_id = c.region_id
       LEFT JOIN orders o ON o.customer_id = c.customer_id AND o.status = 'completed'
       WHERE r.country = 'UK' GROUP BY c.customer_id, c.customer_name""",
    one_to_many=True,
)
ok(
    "What share of 2024 units sold (completed orders) did each category have?",
    f"""SELECT p.category, ROUND(100.0 * SUM(oi.quantity) / SUM(SUM(oi.quantity)) OVER (), 2) AS units_pct
        FROM order_items oi JOIN orders o ON o.order_id = oi.order_id
        JOIN products p ON p.product_id = oi.product_id
        WHERE o.status = 'completed' AND {in_year("o.order_date", 2024)} GROUP BY p.category""",
)
ok(
    "Which 3 regions had the highest completed revenue in 2023?",
    f"""SELECT r.region_name, SUM(o.order_total) AS revenue FROM orders o
        JOIN customers c ON c.customer_id = o.customer_id JOIN regions r ON r.region_id = c.region_id
        WHERE o.status = 'completed' AND {in_year("o.order_date", 2023)}
        GROUP BY r.region_name ORDER BY revenue DESC, r.region_name LIMIT 3""",
)
ok(
    "Show completed revenue per country and year (Unknown for customers without a region).",
    f"""SELECT COALESCE(r.country, 'Unknown') AS country, {YEAR} AS year, SUM(o.order_total) AS revenue
        FROM orders o JOIN customers c ON c.customer_id = o.customer_id
        LEFT JOIN regions r ON r.region_id = c.region_id WHERE o.status = 'completed' GROUP BY 1, 2""",
)
ok(
    "How many order lines does each completed order from 2024-06-15 have, and how many units?",
    """SELECT o.order_id, COUNT(*) AS lines, SUM(oi.quantity) AS units FROM orders o
       JOIN order_items oi ON oi.order_id = o.order_id
       WHERE o.status = 'completed' AND o.order_date = '2024-06-15' GROUP BY o.order_id""",
    one_to_many=True,
)
ok(
    "List every payment made for orders placed on 2024-03-01.",
    """SELECT o.order_id, o.status, p.payment_id, p.method, p.amount FROM orders o
       JOIN payments p ON p.order_id = o.order_id WHERE o.order_date = '2024-03-01'""",
    one_to_many=True,
)
ok(
    "What is each category's net sales on completed orders, and its share of the total?",
    f"""WITH by_category AS (
            SELECT p.category, SUM({NET}) AS net_sales FROM order_items oi
            JOIN orders o ON o.order_id = oi.order_id JOIN products p ON p.product_id = oi.product_id
            WHERE o.status = 'completed' GROUP BY p.category)
        SELECT category, net_sales, ROUND(100.0 * net_sales / (SELECT SUM(net_sales) FROM by_category), 2) AS share_pct
        FROM by_category""",
)
ok(
    "How many completed orders were shipped by each carrier (an order counts once per carrier)?",
    """SELECT s.carrier, COUNT(DISTINCT s.order_id) AS orders FROM shipments s
       JOIN orders o ON o.order_id = s.order_id WHERE o.status = 'completed' GROUP BY s.carrier""",
)
ok(
    "Which active products did not sell at all in the last week of 2024 (December 25 to 31)?",
    """SELECT p.product_id, p.product_name FROM products p WHERE p.is_active AND NOT EXISTS (
           SELECT 1 FROM order_items oi JOIN orders o ON o.order_id = oi.order_id
           WHERE oi.product_id = p.product_id AND o.order_date BETWEEN '2024-12-25' AND '2024-12-31')""",
)
ok(
    "What is the gross merchandise value (before discounts) of completed orders in 2023?",
    f"""SELECT SUM(oi.quantity * oi.unit_price) AS gross_value FROM order_items oi
        JOIN orders o ON o.order_id = oi.order_id WHERE o.status = 'completed' AND {in_year("o.order_date", 2023)}""",
)
ok(
    "Show the completed revenue of each of the 10 most recently signed-up customers.",
    """SELECT c.customer_id, c.signup_date, COALESCE(SUM(o.order_total), 0) AS revenue FROM customers c
       LEFT JOIN orders o ON o.customer_id = c.customer_id AND o.status = 'completed'
       WHERE c.customer_id IN (SELECT customer_id FROM customers ORDER BY signup_date DESC, customer_id LIMIT 10)
       GROUP BY c.customer_id, c.signup_date""",
)
ok(
    "Which customers' first order was a cancelled one?",
    """WITH first_orders AS (
           SELECT o.customer_id, o.status,
                  ROW_NUMBER() OVER (PARTITION BY o.customer_id ORDER BY o.order_date, o.order_id) AS position
           FROM orders o)
       SELECT customer_id FROM first_orders WHERE position = 1 AND status = 'cancelled'""",
)
ok(
    "Compare net sales on completed orders in 2023 and 2024 for each category.",
    f"""SELECT p.category,
            SUM(CASE WHEN {in_year("o.order_date", 2023)} THEN {NET} ELSE 0 END) AS net_sales_2023,
            SUM(CASE WHEN {in_year("o.order_date", 2024)} THEN {NET} ELSE 0 END) AS net_sales_2024
        FROM order_items oi JOIN orders o ON o.order_id = oi.order_id
        JOIN products p ON p.product_id = oi.product_id WHERE o.status = 'completed' GROUP BY p.category""",
)

# --- Wrong items, each with the correct SQL for its question --------------------------

# unknown_object: a table or column that does not exist.
bad(
    "unknown_object",
    "What was the completed revenue per region?",
    "SELECT o.region_id, SUM(o.order_total) AS revenue FROM orders o WHERE o.status = 'completed' GROUP BY o.region_id",
    """SELECT c.region_id, SUM(o.order_total) AS revenue FROM orders o JOIN customers c ON c.customer_id = o.customer_id
       WHERE o.status = 'completed' GROUP BY c.region_id""",
)
bad(
    "unknown_object",
    "List the names and phone numbers of customers in Quebec.",
    """SELECT c.customer_name, c.phone FROM customers c JOIN regions r ON r.region_id = c.region_id
       WHERE r.region_name = 'Quebec'""",
    """SELECT c.customer_name, c.email FROM customers c JOIN regions r ON r.region_id = c.region_id
       WHERE r.region_name = 'Quebec'""",
)
bad(
    "unknown_object",
    "What were total sales in 2024?",
    f"SELECT SUM(s.amount) AS sales FROM sales s WHERE {in_year('s.sale_date', 2024)}",
    f"SELECT SUM(o.order_total) AS sales FROM orders o WHERE {COMPLETED_2024}",
)
bad(
    "unknown_object",
    "What is the average selling price of each product?",
    "SELECT oi.product_id, ROUND(AVG(oi.price), 2) AS average_price FROM order_items oi GROUP BY oi.product_id",
    "SELECT oi.product_id, ROUND(AVG(oi.unit_price), 2) AS average_price FROM order_items oi GROUP BY oi.product_id",
)
bad(
    "unknown_object",
    "How many shipments were delivered in December 2024?",
    "SELECT COUNT(*) AS shipments FROM shipments WHERE delivered_at >= '2024-12-01' AND delivered_at < '2025-01-01'",
    "SELECT COUNT(*) AS shipments FROM shipments WHERE shipped_at >= '2024-12-01' AND shipped_at < '2025-01-01'",
)

# join_fanout: a one-to-many join multiplies the rows that are then summed or counted.
SHIPPED_COMPLETED = """SELECT SUM(o.order_total) AS total_value FROM orders o WHERE o.status = 'completed'
    AND EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.order_id)"""
bad(
    "join_fanout",
    "What is the total value of completed orders that have shipped?",
    """SELECT SUM(o.order_total) AS total_value FROM orders o JOIN shipments s ON s.order_id = o.order_id
       WHERE o.status = 'completed'""",
    SHIPPED_COMPLETED,
)
bad(
    "join_fanout",
    "What was the completed revenue in each year?",
    f"""SELECT {YEAR} AS year, SUM(o.order_total) AS revenue FROM orders o
        JOIN payments p ON p.order_id = o.order_id WHERE o.status = 'completed' GROUP BY 1""",
    f"SELECT {YEAR} AS year, SUM(o.order_total) AS revenue FROM orders o WHERE o.status = 'completed' GROUP BY 1",
)
bad(
    "join_fanout",
    "What was the completed revenue per product category in 2024?",
    f"""SELECT p.category, SUM(o.order_total) AS revenue FROM orders o
        JOIN order_items oi ON oi.order_id = o.order_id JOIN products p ON p.product_id = oi.product_id
        WHERE {COMPLETED_2024} GROUP BY p.category""",
    f"""SELECT p.category, SUM({NET}) AS revenue FROM orders o
        JOIN order_items oi ON oi.order_id = o.order_id JOIN products p ON p.product_id = oi.product_id
        WHERE {COMPLETED_2024} GROUP BY p.category""",
)
bad(
    "join_fanout",
    "What is the average value of completed orders that contain a Books product?",
    """SELECT ROUND(AVG(o.order_total), 2) AS average_order_value FROM orders o
       JOIN order_items oi ON oi.order_id = o.order_id JOIN products p ON p.product_id = oi.product_id
       WHERE o.status = 'completed' AND p.category = 'Books'""",
    """SELECT ROUND(AVG(o.order_total), 2) AS average_order_value FROM orders o WHERE o.status = 'completed'
       AND EXISTS (SELECT 1 FROM order_items oi JOIN products p ON p.product_id = oi.product_id
                   WHERE oi.order_id = o.order_id AND p.category = 'Books')""",
)
bad(
    "join_fanout",
    "How many completed orders did each region place (Unknown for customers without a region)?",
    """SELECT COALESCE(r.region_name, 'Unknown') AS region, COUNT(*) AS orders FROM orders o
       JOIN order_items oi ON oi.order_id = o.order_id JOIN customers c ON c.customer_id = o.customer_id
       LEFT JOIN regions r ON r.region_id = c.region_id WHERE o.status = 'completed' GROUP BY 1""",
    """SELECT COALESCE(r.region_name, 'Unknown') AS region, COUNT(*) AS orders FROM orders o
       JOIN customers c ON c.customer_id = o.customer_id
       LEFT JOIN regions r ON r.region_id = c.region_id WHERE o.status = 'completed' GROUP BY 1""",
)
bad(
    "join_fanout",
    "How much has been paid on orders of each status?",
    """SELECT o.status, SUM(p.amount) AS paid FROM orders o JOIN payments p ON p.order_id = o.order_id
       LEFT JOIN shipments s ON s.order_id = o.order_id GROUP BY o.status""",
    "SELECT o.status, SUM(p.amount) AS paid FROM orders o JOIN payments p ON p.order_id = o.order_id GROUP BY o.status",
)
bad(
    "join_fanout",
    "Who are the top 10 customers by lifetime completed revenue?",
    """SELECT o.customer_id, SUM(o.order_total) AS revenue FROM orders o JOIN payments p ON p.order_id = o.order_id
       WHERE o.status = 'completed' GROUP BY o.customer_id ORDER BY revenue DESC, o.customer_id LIMIT 10""",
    """SELECT o.customer_id, SUM(o.order_total) AS revenue FROM orders o
       WHERE o.status = 'completed' GROUP BY o.customer_id ORDER BY revenue DESC, o.customer_id LIMIT 10""",
)
bad(
    "join_fanout",
    "How many units were sold on completed orders that have shipped?",
    """SELECT SUM(oi.quantity) AS units FROM order_items oi JOIN orders o ON o.order_id = oi.order_id
       JOIN shipments s ON s.order_id = o.order_id WHERE o.status = 'completed'""",
    """SELECT SUM(oi.quantity) AS units FROM order_items oi JOIN orders o ON o.order_id = oi.order_id
       WHERE o.status = 'completed' AND EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.order_id)""",
)
bad(
    "join_fanout",
    "Show completed revenue per month in 2024 for orders with at least one line item.",
    f"""SELECT {MONTH} AS month, SUM(o.order_total) AS revenue FROM orders o
        JOIN order_items oi ON oi.order_id = o.order_id WHERE {COMPLETED_2024} GROUP BY 1""",
    f"""SELECT {MONTH} AS month, SUM(o.order_total) AS revenue FROM orders o WHERE {COMPLETED_2024}
        AND EXISTS (SELECT 1 FROM order_items oi WHERE oi.order_id = o.order_id) GROUP BY 1""",
)
bad(
    "join_fanout",
    "How many orders are there in each status, and how much was paid on them?",
    """SELECT o.status, COUNT(*) AS orders, SUM(p.amount) AS paid FROM orders o
       LEFT JOIN payments p ON p.order_id = o.order_id GROUP BY o.status""",
    """SELECT o.status, COUNT(*) AS orders, SUM(paid.amount) AS paid FROM orders o
       LEFT JOIN (SELECT order_id, SUM(amount) AS amount FROM payments GROUP BY order_id) paid
       ON paid.order_id = o.order_id GROUP BY o.status""",
)
bad(
    "join_fanout",
    "What is the total value of completed orders by the carrier that shipped them first?",
    """SELECT s.carrier, SUM(o.order_total) AS total_value FROM orders o JOIN shipments s ON s.order_id = o.order_id
       WHERE o.status = 'completed' GROUP BY s.carrier""",
    """WITH first_parcel AS (
           SELECT s.order_id, s.carrier,
                  ROW_NUMBER() OVER (PARTITION BY s.order_id ORDER BY s.shipped_at, s.shipment_id) AS position
           FROM shipments s)
       SELECT f.carrier, SUM(o.order_total) AS total_value FROM orders o
       JOIN first_parcel f ON f.order_id = o.order_id AND f.position = 1
       WHERE o.status = 'completed' GROUP BY f.carrier""",
)

# misread_intent: a valid query that answers another question.
bad(
    "misread_intent",
    "How many customers placed at least one order in 2024?",
    f"SELECT COUNT(*) AS customers FROM orders o WHERE {in_year('o.order_date', 2024)}",
    f"SELECT COUNT(DISTINCT o.customer_id) AS customers FROM orders o WHERE {in_year('o.order_date', 2024)}",
)
bad(
    "misread_intent",
    "What are the 5 cheapest active products?",
    "SELECT product_name, list_price FROM products WHERE is_active ORDER BY list_price DESC, product_id LIMIT 5",
    "SELECT product_name, list_price FROM products WHERE is_active ORDER BY list_price, product_id LIMIT 5",
)
bad(
    "misread_intent",
    "When did each customer in Ontario place their most recent order?",
    """SELECT c.customer_id, MIN(o.order_date) AS last_order FROM customers c
       JOIN regions r ON r.region_id = c.region_id JOIN orders o ON o.customer_id = c.customer_id
       WHERE r.region_name = 'Ontario' GROUP BY c.customer_id""",
    """SELECT c.customer_id, MAX(o.order_date) AS last_order FROM customers c
       JOIN regions r ON r.region_id = c.region_id JOIN orders o ON o.customer_id = c.customer_id
       WHERE r.region_name = 'Ontario' GROUP BY c.customer_id""",
)
bad(
    "misread_intent",
    "What percentage of orders placed in 2024 were cancelled?",
    f"SELECT COUNT(*) AS cancelled FROM orders o WHERE o.status = 'cancelled' AND {in_year('o.order_date', 2024)}",
    f"""SELECT ROUND(100.0 * SUM(CASE WHEN o.status = 'cancelled' THEN 1 ELSE 0 END) / COUNT(*), 2) AS cancelled_pct
        FROM orders o WHERE {in_year("o.order_date", 2024)}""",
)
bad(
    "misread_intent",
    "How many customers signed up in 2024?",
    f"SELECT COUNT(DISTINCT o.customer_id) AS customers FROM orders o WHERE {in_year('o.order_date', 2024)}",
    f"SELECT COUNT(*) AS customers FROM customers WHERE {in_year('signup_date', 2024)}",
)
bad(
    "misread_intent",
    "Which 5 products brought in the most net sales on completed orders?",
    """SELECT p.product_id, p.product_name, SUM(oi.quantity) AS units FROM order_items oi
       JOIN orders o ON o.order_id = oi.order_id JOIN products p ON p.product_id = oi.product_id
       WHERE o.status = 'completed' GROUP BY p.product_id, p.product_name ORDER BY units DESC, p.product_id LIMIT 5""",
    f"""SELECT p.product_id, p.product_name, SUM({NET}) AS net_sales FROM order_items oi
        JOIN orders o ON o.order_id = oi.order_id JOIN products p ON p.product_id = oi.product_id
        WHERE o.status = 'completed' GROUP BY p.product_id, p.product_name ORDER BY net_sales DESC, p.product_id
        LIMIT 5""",
)

# aggregation_grain: an aggregate taken at the wrong grain, often over pre-aggregated rows.
bad(
    "aggregation_grain",
    "What was the average completed order value in 2024?",
    f"SELECT ROUND(AVG(revenue), 2) AS average_order_value FROM daily_sales WHERE {in_year('sales_date', 2024)}",
    f"SELECT ROUND(AVG(o.order_total), 2) AS average_order_value FROM orders o WHERE {COMPLETED_2024}",
)
bad(
    "aggregation_grain",
    "What is the average number of units per order?",
    "SELECT ROUND(AVG(quantity), 2) AS units_per_order FROM order_items",
    """SELECT ROUND(AVG(units), 2) AS units_per_order FROM (
           SELECT order_id, SUM(quantity) AS units FROM order_items GROUP BY order_id) per_order""",
)
bad(
    "aggregation_grain",
    "What was the highest daily completed revenue in 2024?",
    f"SELECT MAX(o.order_total) AS best_day FROM orders o WHERE {COMPLETED_2024}",
    f"SELECT MAX(revenue) AS best_day FROM daily_sales WHERE {in_year('sales_date', 2024)}",
)
bad(
    "aggregation_grain",
    "What was the average monthly completed revenue in 2023?",
    f"SELECT ROUND(AVG(o.order_total), 2) AS average_monthly_revenue FROM orders o WHERE o.status = 'completed' "
    f"AND {in_year('o.order_date', 2023)}",
    f"""SELECT ROUND(AVG(revenue), 2) AS average_monthly_revenue FROM (
            SELECT {MONTH} AS month, SUM(o.order_total) AS revenue FROM orders o
            WHERE o.status = 'completed' AND {in_year("o.order_date", 2023)} GROUP BY 1) monthly""",
)
bad(
    "aggregation_grain",
    "How many units did a completed order contain on average in 2024?",
    f"SELECT ROUND(AVG(items_sold), 2) AS units_per_order FROM daily_sales WHERE {in_year('sales_date', 2024)}",
    f"""SELECT ROUND(SUM(items_sold) * 1.0 / SUM(orders_count), 2) AS units_per_order FROM daily_sales
        WHERE {in_year("sales_date", 2024)}""",
)
bad(
    "aggregation_grain",
    "How much does a customer spend on completed orders on average (customers with at least one)?",
    "SELECT ROUND(AVG(order_total), 2) AS average_spend FROM orders WHERE status = 'completed'",
    """SELECT ROUND(AVG(spent), 2) AS average_spend FROM (
           SELECT customer_id, SUM(order_total) AS spent FROM orders WHERE status = 'completed'
           GROUP BY customer_id) per_customer""",
)

# missing_filter: cancelled, refunded or pending orders (or inactive products) counted.
bad(
    "missing_filter",
    "What was the completed revenue in 2024?",
    f"SELECT SUM(o.order_total) AS revenue FROM orders o WHERE {in_year('o.order_date', 2024)}",
    f"SELECT SUM(o.order_total) AS revenue FROM orders o WHERE {COMPLETED_2024}",
)
bad(
    "missing_filter",
    "What was the average completed order value in 2023?",
    f"SELECT ROUND(AVG(o.order_total), 2) AS average_order_value FROM orders o WHERE {in_year('o.order_date', 2023)}",
    f"""SELECT ROUND(AVG(o.order_total), 2) AS average_order_value FROM orders o
        WHERE o.status = 'completed' AND {in_year("o.order_date", 2023)}""",
)
bad(
    "missing_filter",
    "How many units of each category were sold on completed orders?",
    """SELECT p.category, SUM(oi.quantity) AS units FROM order_items oi
       JOIN products p ON p.product_id = oi.product_id GROUP BY p.category""",
    """SELECT p.category, SUM(oi.quantity) AS units FROM order_items oi JOIN orders o ON o.order_id = oi.order_id
       JOIN products p ON p.product_id = oi.product_id WHERE o.status = 'completed' GROUP BY p.category""",
)
bad(
    "missing_filter",
    "Who are the 5 customers with the highest completed revenue?",
    """SELECT customer_id, SUM(order_total) AS revenue FROM orders
       GROUP BY customer_id ORDER BY revenue DESC, customer_id LIMIT 5""",
    """SELECT customer_id, SUM(order_total) AS revenue FROM orders WHERE status = 'completed'
       GROUP BY customer_id ORDER BY revenue DESC, customer_id LIMIT 5""",
)
bad(
    "missing_filter",
    "How many active products does each category have?",
    "SELECT category, COUNT(*) AS products FROM products GROUP BY category",
    "SELECT category, COUNT(*) AS products FROM products WHERE is_active GROUP BY category",
)
bad(
    "missing_filter",
    "How much was paid by paypal for completed orders?",
    "SELECT SUM(p.amount) AS paid FROM payments p WHERE p.method = 'paypal'",
    """SELECT SUM(p.amount) AS paid FROM payments p JOIN orders o ON o.order_id = p.order_id
       WHERE o.status = 'completed' AND p.method = 'paypal'""",
)

# dropped_rows: an inner join on the nullable customers.region_id drops customers (or an
# inner join drops the rows with no match).
bad(
    "dropped_rows",
    "What share of completed revenue comes from each region (Unknown for customers without a region)?",
    """SELECT r.region_name, ROUND(100.0 * SUM(o.order_total) / SUM(SUM(o.order_total)) OVER (), 2) AS share_pct
       FROM orders o JOIN customers c ON c.customer_id = o.customer_id JOIN regions r ON r.region_id = c.region_id
       WHERE o.status = 'completed' GROUP BY r.region_name""",
    """SELECT COALESCE(r.region_name, 'Unknown') AS region_name,
              ROUND(100.0 * SUM(o.order_total) / SUM(SUM(o.order_total)) OVER (), 2) AS share_pct
       FROM orders o JOIN customers c ON c.customer_id = o.customer_id LEFT JOIN regions r ON r.region_id = c.region_id
       WHERE o.status = 'completed' GROUP BY 1""",
)
bad(
    "dropped_rows",
    "List every customer with the name of their region.",
    "SELECT c.customer_id, c.customer_name, r.region_name FROM customers c JOIN regions r ON r.region_id = c.region_id",
    """SELECT c.customer_id, c.customer_name, r.region_name FROM customers c
       LEFT JOIN regions r ON r.region_id = c.region_id""",
)
bad(
    "dropped_rows",
    "What was the total completed revenue in 2024, counting customers with and without a region?",
    f"""SELECT SUM(o.order_total) AS revenue FROM orders o JOIN customers c ON c.customer_id = o.customer_id
        JOIN regions r ON r.region_id = c.region_id WHERE {COMPLETED_2024}""",
    f"""SELECT SUM(o.order_total) AS revenue FROM orders o JOIN customers c ON c.customer_id = o.customer_id
        LEFT JOIN regions r ON r.region_id = c.region_id WHERE {COMPLETED_2024}""",
)
bad(
    "dropped_rows",
    "How many orders did each customer place, including customers with no orders?",
    """SELECT c.customer_id, COUNT(o.order_id) AS orders FROM customers c
       JOIN orders o ON o.customer_id = c.customer_id GROUP BY c.customer_id""",
    """SELECT c.customer_id, COUNT(o.order_id) AS orders FROM customers c
       LEFT JOIN orders o ON o.customer_id = c.customer_id GROUP BY c.customer_id""",
)
bad(
    "dropped_rows",
    "How many customers are there per country (Unknown for customers without a region)?",
    """SELECT r.country, COUNT(*) AS customers FROM customers c JOIN regions r ON r.region_id = c.region_id
       GROUP BY r.country""",
    """SELECT COALESCE(r.country, 'Unknown') AS country, COUNT(*) AS customers FROM customers c
       LEFT JOIN regions r ON r.region_id = c.region_id GROUP BY 1""",
)
bad(
    "dropped_rows",
    "What is the average completed order value per country (Unknown for customers without a region)?",
    """SELECT r.country, ROUND(AVG(o.order_total), 2) AS average_order_value FROM orders o
       JOIN customers c ON c.customer_id = o.customer_id JOIN regions r ON r.region_id = c.region_id
       WHERE o.status = 'completed' GROUP BY r.country""",
    """SELECT COALESCE(r.country, 'Unknown') AS country, ROUND(AVG(o.order_total), 2) AS average_order_value
       FROM orders o JOIN customers c ON c.customer_id = o.customer_id LEFT JOIN regions r ON r.region_id = c.region_id
       WHERE o.status = 'completed' GROUP BY 1""",
)

# wrong_measure: the wrong column or expression for the quantity asked.
bad(
    "wrong_measure",
    "What were the net sales of Electronics on completed orders in 2024?",
    f"""SELECT SUM(oi.quantity * p.list_price) AS net_sales FROM order_items oi
        JOIN orders o ON o.order_id = oi.order_id JOIN products p ON p.product_id = oi.product_id
        WHERE p.category = 'Electronics' AND {COMPLETED_2024}""",
    f"""SELECT SUM({NET}) AS net_sales FROM order_items oi
        JOIN orders o ON o.order_id = oi.order_id JOIN products p ON p.product_id = oi.product_id
        WHERE p.category = 'Electronics' AND {COMPLETED_2024}""",
)
bad(
    "wrong_measure",
    "At what average price did each Home product actually sell?",
    """SELECT p.product_name, ROUND(AVG(p.list_price), 2) AS average_price FROM order_items oi
       JOIN products p ON p.product_id = oi.product_id WHERE p.category = 'Home'
       GROUP BY p.product_id, p.product_name""",
    """SELECT p.product_name, ROUND(AVG(oi.unit_price), 2) AS average_price FROM order_items oi
       JOIN products p ON p.product_id = oi.product_id WHERE p.category = 'Home'
       GROUP BY p.product_id, p.product_name""",
)
bad(
    "wrong_measure",
    "What were the net sales per category on completed orders (after discounts)?",
    """SELECT p.category, SUM(oi.quantity * oi.unit_price) AS net_sales FROM order_items oi
       JOIN orders o ON o.order_id = oi.order_id JOIN products p ON p.product_id = oi.product_id
       WHERE o.status = 'completed' GROUP BY p.category""",
    f"""SELECT p.category, SUM({NET}) AS net_sales FROM order_items oi
        JOIN orders o ON o.order_id = oi.order_id JOIN products p ON p.product_id = oi.product_id
        WHERE o.status = 'completed' GROUP BY p.category""",
)
bad(
    "wrong_measure",
    "How much money did discounts cost on completed orders in 2023?",
    f"""SELECT SUM(oi.discount) AS discount_amount FROM order_items oi JOIN orders o ON o.order_id = oi.order_id
        WHERE o.status = 'completed' AND {in_year("o.order_date", 2023)}""",
    f"""SELECT SUM(oi.quantity * oi.unit_price * oi.discount) AS discount_amount FROM order_items oi
        JOIN orders o ON o.order_id = oi.order_id WHERE o.status = 'completed' AND {in_year("o.order_date", 2023)}""",
)
bad(
    "wrong_measure",
    "How many units of each product were sold on completed orders in 2024?",
    f"""SELECT oi.product_id, COUNT(*) AS units FROM order_items oi JOIN orders o ON o.order_id = oi.order_id
        WHERE {COMPLETED_2024} GROUP BY oi.product_id""",
    f"""SELECT oi.product_id, SUM(oi.quantity) AS units FROM order_items oi JOIN orders o ON o.order_id = oi.order_id
        WHERE {COMPLETED_2024} GROUP BY oi.product_id""",
)


def gold_items() -> list[dict]:
    """Return the gold items, correct and wrong mixed in a fixed order, with ids assigned."""
    entries = [dict(item, label="correct", error_class=None, reference_sql=None) for item in correct]
    entries += [dict(item, label="wrong") for item in wrong]
    random.Random(SHUFFLE_SEED).shuffle(entries)
    items = []
    for number, entry in enumerate(entries, start=1):
        items.append(
            {
                "id": f"demo-{number:03d}",
                "question": entry["question"],
                "sql": entry["sql"],
                "label": entry["label"],
                "error_class": entry["error_class"],
                "warehouse": "demo",
                "reference_sql": entry["reference_sql"],
            }
        )
    return items


def main() -> None:
    items = gold_items()
    pairs = [(item["question"], item["sql"]) for item in items]
    assert len(set(pairs)) == len(pairs), "every (question, SQL) pair must appear once"
    OUTPUT.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items))
    by_class: dict[str, int] = {}
    for item in items:
        key = item["error_class"] or "correct"
        by_class[key] = by_class.get(key, 0) + 1
    print(f"wrote {len(items)} items to {OUTPUT.name}: {by_class}")
    legit = [item["id"] for item in items if item["label"] == "correct" and item["sql"] in legit_one_to_many]
    print("correct items with a legitimate one-to-many join:", ", ".join(legit))
    fanout = [item["id"] for item in items if item["error_class"] == "join_fanout"]
    print("join_fanout items:", ", ".join(fanout))


if __name__ == "__main__":
    main()
