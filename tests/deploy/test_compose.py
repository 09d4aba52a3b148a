"""docker-compose.yaml, read as Docker Compose and a user would: valid, complete, and able to start.

Static checks only (no Docker here or in CI): the file validates against the Compose
specification's schema, every variable the worker's settings read reaches it, every command our
image runs exists in the image, the workers wait for migrations and a healthy Temporal, scale
without clashing, and export traces to the dashboard.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import pytest

from runtime.settings import PROJECT_ROOT
from tests.deploy.conftest import check_image_command, validator, variables_read

IMAGE = "research-agent:local"
COMPOSE_TEXT = (PROJECT_ROOT / "docker-compose.yaml").read_text(encoding="utf-8")
# Set by the compose file instead of passed through: they name the stack's own services or paths
# inside the image (a .env written for `research dev` names localhost there).
STACK_OWNED = {
    "DATABASE_URL": "the stack's PostgreSQL",
    "RESEARCH_DATABASE_ENTRA": "the stack's PostgreSQL takes a password, not an Entra token",
    "RESEARCH_WORKER_DATABASE_URL": "the stack's PostgreSQL (the workers use DATABASE_URL)",
    "TEMPORAL_ADDRESS": "the stack's Temporal",
    "TEMPORAL_API_KEY": "the stack's Temporal takes no key (a key would turn TLS on)",
    "RESEARCH_UI_PORT": "run links point at the Temporal UI's host port",
    "RESEARCH_STATE_DIR": "a folder inside the image",
    "RESEARCH_CORPUS_DIR": "a folder inside the image",
}
# Read by libraries rather than by our settings: azure-identity (Entra ID for Azure OpenAI from a
# container) and the OpenTelemetry SDK (docs/configuration.md: headers, resource, sampling).
LIBRARY_VARIABLES = {"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET"}
LIBRARY_VARIABLES |= {"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_RESOURCE_ATTRIBUTES"}
LIBRARY_VARIABLES |= {"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG"}
ASPIRE_OTLP_HTTP_PORT = 18890  # the dashboard image's OTLP/HTTP listener
_INTERPOLATION = re.compile(r"^\$\{(?P<name>[A-Z0-9_]+)(?::?-(?P<default>[^}]*))?\}$")


def _ours(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: service
        for name, service in compose["services"].items()
        if service.get("image") == IMAGE or "build" in service
    }


def _interpolated(value: object) -> tuple[str, str | None] | None:
    match = _INTERPOLATION.match(str(value))
    return (match["name"], match["default"]) if match else None


def test_the_file_is_valid_compose(compose: dict[str, Any]) -> None:
    errors = sorted(validator("compose-spec.json").iter_errors(compose), key=str)

    assert not errors, "\n".join(f"{list(error.path)}: {error.message}" for error in errors)


def test_every_variable_the_settings_read_reaches_the_worker(compose: dict[str, Any]) -> None:
    environment = compose["services"]["worker"]["environment"]
    read = variables_read()

    assert sorted(read - set(environment)) == []
    for name in sorted(read - set(STACK_OWNED)):
        passed = _interpolated(environment[name])
        assert passed is not None and passed[0] == name, f"{name} is not passed through"
    for name in STACK_OWNED:
        passed = _interpolated(environment[name])
        assert passed is None or passed[0] != name, f"{name} must be set by the stack"


def test_every_variable_given_is_one_something_reads(compose: dict[str, Any]) -> None:
    environment = compose["services"]["worker"]["environment"]

    assert sorted(set(environment) - variables_read() - LIBRARY_VARIABLES) == []


def test_the_migrations_run_with_the_workers_configuration(compose: dict[str, Any]) -> None:
    services = compose["services"]

    assert services["migrate"]["environment"] == services["worker"]["environment"]
    assert services["migrate"]["image"] == services["worker"]["image"] == IMAGE


def test_our_services_run_commands_the_image_has(compose: dict[str, Any]) -> None:
    ours = _ours(compose)
    assert sorted(ours) == ["migrate", "worker"]
    for service in ours.values():
        check_image_command(service["command"])
        test = service.get("healthcheck", {}).get("test")
        if test:
            assert test[0] == "CMD"
            check_image_command(test[1:])


def test_a_mistyped_command_would_be_caught() -> None:
    with pytest.raises(SystemExit):
        check_image_command(["research", "init-database"])
    with pytest.raises(AssertionError):
        check_image_command(["python", "-m", "runtime.health"])


def test_the_workers_start_after_migrations_and_a_healthy_temporal(
    compose: dict[str, Any],
) -> None:
    services = compose["services"]

    assert services["worker"]["depends_on"]["migrate"] == {
        "condition": "service_completed_successfully"
    }
    assert services["worker"]["depends_on"]["temporal"] == {"condition": "service_healthy"}
    assert services["migrate"]["depends_on"]["postgres"] == {"condition": "service_healthy"}
    assert services["migrate"]["restart"] == "no"
    for name in ("postgres", "temporal", "worker"):
        assert services[name]["healthcheck"]["test"], name
        assert services[name]["restart"] == "unless-stopped", name


def test_workers_scale_and_nothing_takes_a_local_postgresql_port(
    compose: dict[str, Any],
) -> None:
    services = compose["services"]
    assert "container_name" not in services["worker"]
    assert "ports" not in services["worker"]
    for name, service in services.items():
        assert "container_name" not in service, name
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} beyond this host"
            assert not str(port).endswith(":5432"), f"{name} publishes PostgreSQL's port"
    assert "ports" not in services["postgres"]


def test_traces_go_to_the_dashboard_by_default(compose: dict[str, Any]) -> None:
    services = compose["services"]
    passed = _interpolated(services["worker"]["environment"]["OTEL_EXPORTER_OTLP_ENDPOINT"])
    assert passed is not None and passed[1] is not None
    endpoint = urlsplit(passed[1])

    assert endpoint.hostname in services
    assert "aspire-dashboard" in services[endpoint.hostname]["image"]
    assert endpoint.port == ASPIRE_OTLP_HTTP_PORT


def test_data_lives_on_volumes(compose: dict[str, Any]) -> None:
    services = compose["services"]

    assert "postgres-data:/var/lib/postgresql/data" in services["postgres"]["volumes"]
    assert "temporal-data:/home/temporal" in services["temporal"]["volumes"]
    assert "--db-filename=/home/temporal/temporal.db" in services["temporal"]["command"]
    assert set(compose["volumes"]) == {"postgres-data", "temporal-data"}


def test_third_party_images_are_pinned(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        if name in _ours(compose):
            continue
        image = service["image"]
        tag = image.rsplit(":", 1)[-1] if ":" in image.split("/")[-1] else ""
        assert tag and tag != "latest" and any(c.isdigit() for c in tag), f"{name}: {image}"


def test_env_example_names_every_variable_the_stack_and_the_settings_read(
    compose: dict[str, Any],
) -> None:
    """`.env.example` is where a user learns the variables (`cp .env.example .env`)."""
    text = (PROJECT_ROOT / ".env.example").read_text(encoding="utf-8")
    listed = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", text, re.M))
    interpolated = set(re.findall(r"\$\{([A-Z][A-Z0-9_]+)", COMPOSE_TEXT))

    assert sorted((variables_read() | interpolated) - listed - LIBRARY_VARIABLES) == []


def test_the_web_ui_is_the_one_the_dev_server_ships(compose: dict[str, Any]) -> None:
    """`research dev` shows the UI built into the Temporal CLI; compose pins that same version."""
    import subprocess

    from tests.conftest import installed_binary

    version = subprocess.run(
        [installed_binary("temporal"), "--version"], capture_output=True, text=True, check=True
    ).stdout
    shipped = re.search(r"UI (\d+\.\d+\.\d+)", version)
    assert shipped, version

    image = compose["services"]["temporal-ui"]["image"]
    assert image == f"temporalio/ui:{shipped[1]}"
