"""``python -m pytest_sqleval.products.warehouse build --scale N --out PATH``."""
import sys

from . import main

sys.exit(main())
