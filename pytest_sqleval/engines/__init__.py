"""Database engines: run SQL safely and describe the schema. DuckDB is the default."""
