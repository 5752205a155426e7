"""factledger's HTTP API (``pip install 'factledger[server]'``; ``factledger serve``)."""

from factledger.entrypoints.http.app import create_app

__all__ = ["create_app"]
