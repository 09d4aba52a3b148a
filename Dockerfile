# The worker image: `python worker.py` with the project installed. Configure it with environment
# variables (see .env.example); it needs a reachable Temporal (TEMPORAL_ADDRESS) and PostgreSQL
# (DATABASE_URL).
FROM python:3.11-slim
WORKDIR /app
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
COPY pyproject.toml README.md ./
COPY workflows workflows
COPY activities activities
COPY runtime runtime
COPY starter starter
COPY worker.py ./
COPY examples examples
RUN pip install . && useradd --create-home research
USER research
CMD ["python", "worker.py"]
