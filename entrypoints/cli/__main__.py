"""``python -m factledger.entrypoints.cli``: the same as the ``factledger`` command."""

from __future__ import annotations

import sys

from factledger.entrypoints.cli import main

sys.exit(main())
