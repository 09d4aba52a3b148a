"""azure.yaml and infra/ (azd + Bicep), checked offline: valid, parsed as checkov parses them, and
wired as docs/deployment.md says: one managed identity with three least-privilege roles, secrets
only through Key Vault references, Application Insights reaching the worker, PostgreSQL taking
Entra tokens over TLS, and a worker configured only with variables it reads.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from runtime.settings import PROJECT_ROOT, Settings, is_secret_variable
from tests.deploy.bicep import INFRA, Bicep, module_files, parse, render
from tests.deploy.conftest import check_image_command, load_yaml, validator, variables_read

MAIN = parse("main.bicep")
ACR_PULL = "7f951dda-4ed3-4680-a7ca-43fe172d538d"
SECRETS_USER = "4633458b-17de-408a-b874-0445c86b69e6"
OPENAI_USER = "5e0bd9bd-7b93-4f28-af87-19fc36ad61bd"
# Read by azure-identity, not by our settings: which managed identity DefaultAzureCredential uses.
IDENTITY_VARIABLES = {"AZURE_CLIENT_ID"}


def _module(symbol: str) -> tuple[Bicep, dict[str, Any]]:
    spec = MAIN.modules[symbol]
    return parse(spec["detail"]["path"]), spec["config"]["params"]


def _fed(symbol: str, parameter: str) -> str:
    """What main.bicep passes to a module's parameter, as text."""
    return render(_module(symbol)[1][parameter])


def _container(app: dict[str, Any]) -> dict[str, Any]:
    (container,) = app["properties"]["template"]["containers"]
    return container


APPS, _ = _module("apps")
WORKER = APPS.resource("Microsoft.App/containerApps")
JOB = APPS.resource("Microsoft.App/jobs")
WORKER_SECRETS: list[dict[str, Any]] = APPS.expand(WORKER["properties"]["configuration"]["secrets"])
WORKER_ENV: list[dict[str, Any]] = APPS.expand(_container(WORKER)["env"])


def _env(name: str) -> dict[str, Any]:
    (item,) = [item for item in WORKER_ENV if item["name"] == name]
    return item


def test_azure_yaml_is_valid_and_names_the_worker_service() -> None:
    azure = load_yaml("azure.yaml")
    errors = sorted(validator("azure.yaml.json").iter_errors(azure), key=str)
    assert not errors, "\n".join(f"{list(error.path)}: {error.message}" for error in errors)

    worker = azure["services"]["worker"]
    assert worker["host"] == "containerapp"
    assert (PROJECT_ROOT / worker["docker"]["path"]).is_file()
    assert azure["infra"] == {"provider": "bicep", "path": "infra", "module": "main"}
    hook = PROJECT_ROOT / azure["hooks"]["postdeploy"]["posix"]["run"]
    assert hook.is_file() and hook.stat().st_mode & 0o111, "the hook must be executable"
    # azd finds the app to deploy by its service name in this tag.
    (tag,) = [sorted(azure["services"])]
    assert WORKER["tags"]["function"]["parameters"]["arg_2"] == {"'azd-service-name'": tag[0]}


def test_every_bicep_file_parses() -> None:
    files = module_files()
    assert "main.bicep" in files and len(files) == 1 + len(MAIN.modules)
    for relative in files:
        assert parse(relative).tree, relative


@pytest.mark.parametrize("symbol", sorted(MAIN.modules))
def test_each_module_gets_every_parameter_it_needs_and_no_other(symbol: str) -> None:
    bicep, passed = _module(symbol)
    declared = bicep.parameters
    required = {name for name, spec in declared.items() if "default" not in spec}

    assert sorted(set(passed) - set(declared)) == []
    assert sorted(required - set(passed)) == []
    assert MAIN.modules[symbol]["config"]["scope"] == "group"


def test_the_parameters_file_sets_main_parameters_only_and_every_required_one() -> None:
    parameters = json.loads((INFRA / "main.parameters.json").read_text(encoding="utf-8"))
    given = set(parameters["parameters"])
    required = {name for name, spec in MAIN.parameters.items() if spec.get("default") is None}

    assert sorted(given - set(MAIN.parameters)) == []
    assert required == {"environmentName", "location", "temporalAddress"}
    assert required <= given


def test_the_identity_holds_three_roles_each_on_the_one_resource_it_needs() -> None:
    granted: dict[str, tuple[str, str]] = {}
    for symbol in MAIN.modules:
        bicep, passed = _module(symbol)
        fed = {
            name
            for name, value in passed.items()
            if render(value) == "identity.outputs.principalId"
        }
        for assignment in bicep.resources("Microsoft.Authorization/roleAssignments").values():
            properties = assignment["properties"]
            if properties["principalId"] not in fed:
                continue
            role = bicep.expand(
                properties["roleDefinitionId"]["function"]["parameters"]["resource_name_1"]
            )
            scope = bicep.tree["resources"][assignment["scope"]]["type"]
            assert role not in granted, f"{role} granted twice"
            granted[role] = (symbol, scope)
            assert properties["principalType"] == "ServicePrincipal"

    assert granted == {
        ACR_PULL: ("registry", "Microsoft.ContainerRegistry/registries"),
        SECRETS_USER: ("keyVault", "Microsoft.KeyVault/vaults"),
        OPENAI_USER: ("openAi", "Microsoft.CognitiveServices/accounts"),
    }
    assert not MAIN.tree.get("resources", {}).keys() - {"group"}  # nothing granted at a wider scope


def test_worker_and_job_run_as_the_identity_and_pull_with_it() -> None:
    assert _fed("apps", "identityId") == "identity.outputs.id"
    assert _fed("apps", "identityClientId") == "identity.outputs.clientId"
    assert _fed("apps", "registryServer") == "registry.outputs.loginServer"
    for app in (WORKER, JOB):
        assert app["identity"] == {
            "type": "UserAssigned",
            "userAssignedIdentities": {"'${identityId}'": {}},
        }
        registries = APPS.expand(app["properties"]["configuration"]["registries"])
        assert registries == [{"server": "registryServer", "identity": "identityId"}]
    assert _env("AZURE_CLIENT_ID") == {"name": "AZURE_CLIENT_ID", "value": "identityClientId"}


def _secret_named_by(uri: Any, vault: Bicep) -> str:
    """The name of the vault secret a Key Vault output URI points at (`.../secrets/<name>`, the
    name written out or as `${symbol.name}`); a conditional URI is read on its non-empty side."""
    if isinstance(uri, dict):
        branches = uri["operator"]["operands"]
        uri = branches["false_value"] or branches["true_value"]
    named = re.fullmatch(r"\$\{vault\.properties\.vaultUri\}secrets/(.+)", uri)
    assert named, uri
    symbol = re.fullmatch(r"\$\{(\w+)\.name\}", named[1])
    secrets = vault.resources("Microsoft.KeyVault/vaults/secrets")
    name: str = secrets[symbol[1]]["name"] if symbol else named[1]
    assert name in {body["name"] for body in secrets.values()}, f"no vault secret {name}"
    return name


def test_every_secret_is_a_key_vault_reference_to_a_secret_the_vault_holds() -> None:
    vault, _ = _module("keyVault")
    assert len(WORKER_SECRETS) == 3
    for secret in WORKER_SECRETS:
        assert set(secret) == {"name", "keyVaultUrl", "identity"}, "no secret value inline"
        assert secret["identity"] == "identityId"
        source = _fed("apps", secret["keyVaultUrl"])
        assert source.startswith("keyVault.outputs."), source
        uri = vault.outputs[source.removeprefix("keyVault.outputs.")]
        assert secret["name"] == _secret_named_by(uri, vault)


def test_secret_settings_reach_the_worker_only_as_secret_references() -> None:
    secret_names = {secret["name"] for secret in WORKER_SECRETS}
    for item in WORKER_ENV:
        if "secretRef" in item:
            assert item["secretRef"] in secret_names
            assert set(item) == {"name", "secretRef"}
        elif is_secret_variable(item["name"]) and item["name"] != "DATABASE_URL":
            pytest.fail(f"{item['name']} is a secret given as a plain value")
    for name in ("TEMPORAL_API_KEY", "SERPER_API_KEY", "APPLICATIONINSIGHTS_CONNECTION_STRING"):
        assert "secretRef" in _env(name)
    database_url = MAIN.variables["databaseUrl"]
    assert re.match(r"^postgresql://[^:@/]+@", database_url), "the database URL holds no password"


def test_application_insights_reaches_the_worker_through_key_vault() -> None:
    monitoring, _ = _module("monitoring")
    vault, vault_params = _module("keyVault")
    assert monitoring.resources("Microsoft.Insights/components")
    assert render(vault_params["appInsightsName"]) == "monitoring.outputs.appInsightsName"
    component = vault.tree["resources"]["appInsights"]
    assert component["existing"] and component["config"]["name"] == "appInsightsName"
    (symbol,) = [
        symbol
        for symbol, body in vault.resources("Microsoft.KeyVault/vaults/secrets").items()
        if render(body["properties"]["value"]) == "appInsights.properties.ConnectionString"
    ]
    assert (
        vault.outputs["appInsightsSecretUri"]
        == f"${{vault.properties.vaultUri}}secrets/${{{symbol}.name}}"
    )
    assert _fed("apps", "appInsightsSecretUri") == "keyVault.outputs.appInsightsSecretUri"
    (reference,) = [s for s in WORKER_SECRETS if s["keyVaultUrl"] == "appInsightsSecretUri"]
    assert _env("APPLICATIONINSIGHTS_CONNECTION_STRING")["secretRef"] == reference["name"]


def test_the_worker_is_configured_only_with_variables_it_reads_and_they_parse() -> None:
    names = {item["name"] for item in WORKER_ENV}
    assert sorted(names - variables_read() - IDENTITY_VARIABLES) == []
    assert _env("RESEARCH_DATABASE_ENTRA")["value"] == "1"
    assert _env("RESEARCH_MODEL_PROVIDER")["value"] == "azure"
    assert _fed("apps", "openAiEndpoint") == "openAi.outputs.endpoint"
    assert _fed("apps", "modelDeploymentName") == "openAi.outputs.deploymentName"

    # The values Azure gives, in the shape they take, are settings the worker accepts.
    sample = {
        "databaseUrl": "postgresql://id-research-x@psql-x.postgres.database.azure.com:5432/research"
        "?sslmode=verify-full&sslrootcert=system",
        "openAiEndpoint": "https://oai-x.openai.azure.com/",
        "temporalAddress": "eastus2.azure.api.temporal.io:7233",
        "searchProvider": "serper",
    }
    environ = {
        item["name"]: sample.get(item.get("value", ""), item.get("value", "secret"))
        for item in WORKER_ENV
    }
    settings = Settings.from_env(environ)
    assert settings.database_entra and settings.model_provider == "azure"
    assert settings.azure_openai_endpoint == "https://oai-x.openai.azure.com/openai/v1/"
    assert settings.temporal_api_key and settings.serper_api_key


def test_postgresql_takes_entra_tokens_over_tls_only_and_the_identity_administers_it() -> None:
    postgres, passed = _module("postgres")
    server = postgres.resource("Microsoft.DBforPostgreSQL/flexibleServers")
    assert server["properties"]["authConfig"]["activeDirectoryAuth"] == "Enabled"
    assert server["properties"]["authConfig"]["passwordAuth"] == "Disabled"
    assert "administratorLoginPassword" not in server["properties"]
    tls = postgres.resource("Microsoft.DBforPostgreSQL/flexibleServers/configurations")
    assert (tls["name"], tls["properties"]["value"]) == ("require_secure_transport", "ON")
    admin = postgres.resource("Microsoft.DBforPostgreSQL/flexibleServers/administrators")
    assert admin["name"] == "administratorPrincipalId"
    assert admin["properties"]["principalType"] == "ServicePrincipal"
    assert render(passed["administratorPrincipalId"]) == "identity.outputs.principalId"
    assert render(passed["administratorName"]) == "identity.outputs.name"
    assert render(postgres.outputs["administratorName"]) == "administrator.properties.principalName"
    assert MAIN.variables["databaseUrl"].startswith(
        "postgresql://${postgres.outputs.administratorName}@${postgres.outputs.fqdn}:5432/"
    )
    assert "sslmode=verify-full" in MAIN.variables["databaseUrl"]
    assert _fed("apps", "databaseUrl") == "databaseUrl"


def test_azure_openai_serves_one_deployment_without_keys() -> None:
    openai, passed = _module("openAi")
    account = openai.resource("Microsoft.CognitiveServices/accounts")
    assert account["kind"] == "OpenAI"
    assert account["properties"]["disableLocalAuth"] is True
    deployment = openai.resource("Microsoft.CognitiveServices/accounts/deployments")
    assert deployment["properties"]["model"]["name"] == "modelName"
    assert render(passed["modelName"]) == "modelName"
    assert "modelName" in MAIN.parameters


def test_the_worker_and_the_migrations_job_run_commands_the_image_has() -> None:
    check_image_command(_container(WORKER)["command"])
    check_image_command(_container(JOB)["command"])
    assert _container(JOB)["command"] == ["research", "init-db"]
    assert JOB["properties"]["configuration"]["triggerType"] == "Manual"
    job_env = {item["name"] for item in APPS.expand(_container(JOB)["env"])}
    assert job_env == {"DATABASE_URL", "RESEARCH_DATABASE_ENTRA", "AZURE_CLIENT_ID"}


def test_the_worker_scales_between_parameters_and_optionally_on_the_backlog() -> None:
    scale = WORKER["properties"]["template"]["scale"]
    assert (scale["minReplicas"], scale["maxReplicas"]) == (
        "workerMinReplicas",
        "workerMaxReplicas",
    )
    (rule,) = APPS.expand(scale["rules"])
    assert rule["custom"]["type"] == "temporal"
    assert rule["custom"]["metadata"]["taskQueue"] == "taskQueue"


def test_outputs_give_azd_and_the_hook_what_they_use() -> None:
    hook = (PROJECT_ROOT / "infra" / "hooks" / "migrate.sh").read_text(encoding="utf-8")
    used = set(re.findall(r"\$\{?([A-Z][A-Z0-9_]+)", hook)) - {"SERVICE_WORKER_IMAGE_NAME"}
    outputs = set(MAIN.outputs)

    assert used and sorted(used - outputs) == []
    assert "AZURE_CONTAINER_REGISTRY_ENDPOINT" in outputs  # where azd pushes the image
    secure = {
        name
        for name, spec in MAIN.parameters.items()
        if any(decorator["type"] == "secure" for decorator in spec["decorators"])
    }
    assert secure == {"temporalApiKey", "serperApiKey"}
    for name, value in MAIN.outputs.items():  # azd writes outputs to .azure/<env>/.env
        text = re.sub(r"empty\(\w+\)", "", render(MAIN.expand(value)))  # asking is not showing
        assert not any(re.search(rf"\b{key}\b", text) for key in secure), f"{name} shows a key"
    worker_settings = {name for name in outputs if name in variables_read()}
    assert worker_settings >= {"DATABASE_URL", "TEMPORAL_ADDRESS", "AZURE_OPENAI_ENDPOINT"}
