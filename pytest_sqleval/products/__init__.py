"""What is built on the grader: the agent under test, the Vantage warehouse, ``validate``
and ``reproduce``. They import the core's public API only."""
