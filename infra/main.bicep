// The research agent on Azure (azd up): a resource group holding the worker as a Container App,
// a Container Apps job for the ledger migrations, Azure Database for PostgreSQL (Entra sign-in,
// TLS), Azure OpenAI with one model deployment, Key Vault, a container registry, Log Analytics and
// Application Insights, all reached through one user-assigned managed identity. Temporal is
// Temporal Cloud (or any Temporal cluster): its address, namespace and API key are parameters.
targetScope = 'subscription'

@minLength(1)
@maxLength(64)
@description('azd environment name: names the resource group and tags every resource.')
param environmentName string

@minLength(1)
@description('Region of every resource (Azure OpenAI must offer the model and SKU there).')
param location string

@description('Object id of the person or pipeline running azd: may set Key Vault secrets. Empty: nobody.')
param principalId string = ''

@minLength(1)
@description('Temporal frontend, e.g. <region>.<cloud>.api.temporal.io:7233 (Temporal Cloud with an API key) or a self-hosted cluster.')
param temporalAddress string

@description('Temporal namespace: <namespace>.<account> on Temporal Cloud.')
param temporalNamespace string = 'default'

@secure()
@description('Temporal Cloud API key (stored in Key Vault). Empty: no key (a self-hosted cluster without auth).')
param temporalApiKey string = ''

param taskQueue string = 'research'

@description('Web search: serper, searxng or corpus. Empty: serper when a Serper key is given, else corpus.')
param searchProvider string = ''

@secure()
@description('serper.dev API key (stored in Key Vault). Empty: no Serper.')
param serperApiKey string = ''

@description('Azure OpenAI model, its version and the deployment that serves it.')
param modelName string = 'gpt-4o-mini'
param modelVersion string = '2024-07-18'
param modelDeploymentName string = 'gpt-4o-mini'
@allowed([
  'GlobalStandard'
  'Standard'
  'DataZoneStandard'
])
param modelDeploymentSku string = 'GlobalStandard'
@description('Deployment capacity in thousands of tokens a minute.')
param modelCapacity int = 10

@description('Worker image; azd sets it on deploy (SERVICE_WORKER_IMAGE_NAME). Empty: a placeholder until then.')
param workerImageName string = ''
@minValue(0)
param workerMinReplicas int = 1
@minValue(1)
param workerMaxReplicas int = 3
param workerScaleOnBacklog bool = false

param postgresSkuName string = 'Standard_B1ms'
param postgresSkuTier string = 'Burstable'
param postgresStorageSizeGB int = 32
param postgresVersion string = '16'

var token = toLower(uniqueString(subscription().id, environmentName, location))
var tags = {
  'azd-env-name': environmentName
}
var placeholderImage = 'mcr.microsoft.com/azuredocs/containerapps-helloworld:latest'
var effectiveSearchProvider = empty(searchProvider) ? (empty(serperApiKey) ? 'corpus' : 'serper') : searchProvider
var databaseName = 'research'

resource group 'Microsoft.Resources/resourceGroups@2024-03-01' = {
  name: 'rg-${environmentName}'
  location: location
  tags: tags
}

module identity 'modules/identity.bicep' = {
  name: 'identity'
  scope: group
  params: {
    name: 'id-research-${token}'
    location: location
    tags: tags
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  scope: group
  params: {
    logAnalyticsName: 'log-${token}'
    appInsightsName: 'appi-${token}'
    location: location
    tags: tags
  }
}

module registry 'modules/registry.bicep' = {
  name: 'registry'
  scope: group
  params: {
    name: 'cr${token}'
    location: location
    tags: tags
    pullerPrincipalId: identity.outputs.principalId
  }
}

module keyVault 'modules/keyvault.bicep' = {
  name: 'keyvault'
  scope: group
  params: {
    name: 'kv-${token}'
    location: location
    tags: tags
    readerPrincipalId: identity.outputs.principalId
    operatorPrincipalId: principalId
    appInsightsName: monitoring.outputs.appInsightsName
    temporalApiKey: temporalApiKey
    serperApiKey: serperApiKey
  }
}

module openAi 'modules/openai.bicep' = {
  name: 'openai'
  scope: group
  params: {
    name: 'oai-${token}'
    location: location
    tags: tags
    userPrincipalId: identity.outputs.principalId
    deploymentName: modelDeploymentName
    modelName: modelName
    modelVersion: modelVersion
    deploymentSku: modelDeploymentSku
    capacity: modelCapacity
  }
}

module postgres 'modules/postgres.bicep' = {
  name: 'postgres'
  scope: group
  params: {
    name: 'psql-${token}'
    location: location
    tags: tags
    databaseName: databaseName
    administratorName: identity.outputs.name
    administratorPrincipalId: identity.outputs.principalId
    skuName: postgresSkuName
    skuTier: postgresSkuTier
    storageSizeGB: postgresStorageSizeGB
    postgresVersion: postgresVersion
  }
}

// The worker signs in as its identity: the user is the identity's name, the password an Entra
// token (RESEARCH_DATABASE_ENTRA=1); the server's certificate is verified against system roots.
var databaseUrl = 'postgresql://${postgres.outputs.administratorName}@${postgres.outputs.fqdn}:5432/${postgres.outputs.databaseName}?sslmode=verify-full&sslrootcert=system'

// Its parameters come from the other modules' outputs, so it is deployed after them: the role
// assignments (AcrPull, Key Vault Secrets User, OpenAI User) and the secrets exist before the
// first revision pulls the image and resolves its Key Vault references.
module apps 'modules/containerapps.bicep' = {
  name: 'containerapps'
  scope: group
  params: {
    environmentName: 'cae-${token}'
    workerName: 'ca-worker-${token}'
    migrationJobName: 'caj-migrate-${token}'
    location: location
    tags: tags
    logAnalyticsName: monitoring.outputs.logAnalyticsName
    identityId: identity.outputs.id
    identityClientId: identity.outputs.clientId
    registryServer: registry.outputs.loginServer
    image: empty(workerImageName) ? placeholderImage : workerImageName
    databaseUrl: databaseUrl
    temporalAddress: temporalAddress
    temporalNamespace: temporalNamespace
    taskQueue: taskQueue
    openAiEndpoint: openAi.outputs.endpoint
    modelDeploymentName: openAi.outputs.deploymentName
    searchProvider: effectiveSearchProvider
    deploymentEnvironment: environmentName
    appInsightsSecretUri: keyVault.outputs.appInsightsSecretUri
    temporalApiKeySecretUri: keyVault.outputs.temporalApiKeySecretUri
    serperApiKeySecretUri: keyVault.outputs.serperApiKeySecretUri
    workerMinReplicas: workerMinReplicas
    workerMaxReplicas: workerMaxReplicas
    workerScaleOnBacklog: workerScaleOnBacklog
  }
}

// azd stores these in the environment (.azure/<env>/.env): the registry it pushes to, the job its
// postdeploy hook runs, and the worker's settings under the names the worker reads
// (`azd env get-values` shows what the worker runs with; no secret is among them).
output AZURE_RESOURCE_GROUP string = group.name
output AZURE_CONTAINER_REGISTRY_ENDPOINT string = registry.outputs.loginServer
output AZURE_CONTAINER_APPS_ENVIRONMENT_NAME string = apps.outputs.environmentName
output AZURE_KEY_VAULT_NAME string = keyVault.outputs.name
output SERVICE_WORKER_NAME string = apps.outputs.workerName
output MIGRATION_JOB_NAME string = apps.outputs.migrationJobName
output DATABASE_URL string = databaseUrl
output RESEARCH_DATABASE_ENTRA string = '1'
output TEMPORAL_ADDRESS string = temporalAddress
output TEMPORAL_NAMESPACE string = temporalNamespace
output RESEARCH_TASK_QUEUE string = taskQueue
output RESEARCH_MODEL_PROVIDER string = 'azure'
output AZURE_OPENAI_ENDPOINT string = openAi.outputs.endpoint
output RESEARCH_MODEL string = openAi.outputs.deploymentName
output RESEARCH_SEARCH_PROVIDER string = effectiveSearchProvider
