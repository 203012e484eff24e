"""``python -m approxpath.cli``: the same as the ``approxpath`` command."""

import sys

from . import main

sys.exit(main())
