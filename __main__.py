"""``python -m factledger``: the same as the ``factledger`` command."""

from factledger.entrypoints.cli import main

main()
