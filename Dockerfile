# The worker image: `python worker.py` (the default command) and the `research` CLI, configured
# with environment variables (see .env.example); it needs a reachable Temporal (TEMPORAL_ADDRESS)
# and PostgreSQL (DATABASE_URL). docker-compose.yaml runs it locally, infra/ on Azure.
#
# Two stages: the build stage installs the runtime dependencies (docker/runtime_requirements.py:
# pyproject.toml's, without the laptop-only Temporal CLI and embedded PostgreSQL) into a virtual
# environment; the final stage copies that environment and the sources, and runs as a non-root user.
# Both stages use the same pinned base (the Python the project is tested on, Debian 12).
FROM python:3.11.13-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY docker/runtime_requirements.py docker/
RUN python -m venv /opt/venv \
    && python docker/runtime_requirements.py pyproject.toml > /tmp/requirements.txt \
    && /opt/venv/bin/pip install --no-cache-dir --upgrade "pip>=25" \
    && /opt/venv/bin/pip install --no-cache-dir -r /tmp/requirements.txt
COPY worker.py ./
COPY workflows workflows
COPY activities activities
COPY runtime runtime
COPY composition composition
COPY starter starter
COPY baselines baselines
# Editable, without dependencies: the `research` command and the import path point at /app, so
# the project root (examples/, the default corpus) is /app as in a checkout. Then pip and
# setuptools leave: nothing installs at run time.
RUN /opt/venv/bin/pip install --no-cache-dir --no-deps --editable . \
    && /opt/venv/bin/pip uninstall --yes pip setuptools

FROM python:3.11.13-slim-bookworm
# /app is read-only for the user: the state folder (only `research demo`/`dev` use it) is its own.
# SSL_CERT_FILE: psycopg-binary's own OpenSSL looks for system roots in a folder of its own, so
# `sslmode=verify-full&sslrootcert=system` (infra/: Azure PostgreSQL) is pointed at Debian's bundle.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    RESEARCH_STATE_DIR=/home/research/.research \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
RUN useradd --uid 10001 --create-home --shell /usr/sbin/nologin research
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
COPY --from=build /app /app
COPY examples examples
RUN python -m compileall -q /app
USER 10001
# Healthy while a worker in this container polls the task queue (runtime/healthcheck.py).
HEALTHCHECK --interval=30s --timeout=15s --start-period=30s --retries=3 \
    CMD ["python", "-m", "runtime.healthcheck"]
CMD ["python", "worker.py"]
