"""``python -m approxpath``: the same as the ``approxpath`` command."""

import sys

from .cli import main

sys.exit(main())
