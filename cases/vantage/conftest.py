"""The bundled Vantage suite adds its generator's own database variants (other seeds) to
the generic ones when a run grades on variants."""
from pytest_sqleval.products.warehouse.native import pytest_sqleval_native_variants  # noqa: F401
