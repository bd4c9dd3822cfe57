"""The grader: cases in, verdicts and records out. It never imports pytest's wiring
(``pytest_sqleval.plugin``) or a product (``pytest_sqleval.products``)."""
