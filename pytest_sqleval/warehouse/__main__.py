"""``python -m pytest_sqleval.warehouse build --scale N --out PATH``."""
import sys

from . import main

sys.exit(main())
