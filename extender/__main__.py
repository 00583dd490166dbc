"""``python -m extender``: the same as the ``extender`` command."""

import sys

from extender.cli import main

sys.exit(main())
