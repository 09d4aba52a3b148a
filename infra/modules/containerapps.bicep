// The Container Apps environment (logs to Log Analytics), the worker app and the migrations job.
// Both run the same image with the worker's user-assigned identity: it pulls from the registry,
// resolves the Key Vault references below and signs in to Azure OpenAI and PostgreSQL.
param environmentName string
param workerName string
param migrationJobName string
param location string
param tags object
param logAnalyticsName string
param identityId string
param identityClientId string
param registryServer string
param image string
param databaseUrl string
param temporalAddress string
param temporalNamespace string
param taskQueue string
param openAiEndpoint string
param modelDeploymentName string
param searchProvider string
@description('Names the deployment on every span (deployment.environment.name): the azd environment.')
param deploymentEnvironment string
param appInsightsSecretUri string
param temporalApiKeySecretUri string
param serperApiKeySecretUri string
@description('Replicas always running (the worker has no ingress: without the backlog rule it stays at this count).')
param workerMinReplicas int
param workerMaxReplicas int
@description('Scale between min and max on the task queue backlog (KEDA temporal scaler, KEDA 2.17+).')
param workerScaleOnBacklog bool

resource logAnalytics 'Microsoft.OperationalInsights/workspaces@2023-09-01' existing = {
  name: logAnalyticsName
}

resource environment 'Microsoft.App/managedEnvironments@2024-03-01' = {
  name: environmentName
  location: location
  tags: tags
  properties: {
    appLogsConfiguration: {
      destination: 'log-analytics'
      logAnalyticsConfiguration: {
        customerId: logAnalytics.properties.customerId
        sharedKey: logAnalytics.listKeys().primarySharedKey
      }
    }
  }
}

var registries = [
  {
    server: registryServer
    identity: identityId
  }
]

// What both the worker and the job need to reach the ledger: the identity (DefaultAzureCredential
// picks it by client id) and a password-less URL signed in with its Entra token.
var databaseEnv = [
  {
    name: 'AZURE_CLIENT_ID'
    value: identityClientId
  }
  {
    name: 'DATABASE_URL'
    value: databaseUrl
  }
  {
    name: 'RESEARCH_DATABASE_ENTRA'
    value: '1'
  }
]

var hasTemporalApiKey = !empty(temporalApiKeySecretUri)
var hasSerperApiKey = !empty(serperApiKeySecretUri)

// Key Vault references, resolved by the platform with the worker's identity; a versionless URI
// follows the newest version of the secret (README "Rotating keys").
var appInsightsSecret = [
  {
    name: 'applicationinsights-connection-string'
    keyVaultUrl: appInsightsSecretUri
    identity: identityId
  }
]
var temporalSecret = hasTemporalApiKey ? [
  {
    name: 'temporal-api-key'
    keyVaultUrl: temporalApiKeySecretUri
    identity: identityId
  }
] : []
var serperSecret = hasSerperApiKey ? [
  {
    name: 'serper-api-key'
    keyVaultUrl: serperApiKeySecretUri
    identity: identityId
  }
] : []

var workerSettings = [
  {
    name: 'TEMPORAL_ADDRESS'
    value: temporalAddress
  }
  {
    name: 'TEMPORAL_NAMESPACE'
    value: temporalNamespace
  }
  {
    name: 'RESEARCH_TASK_QUEUE'
    value: taskQueue
  }
  {
    name: 'RESEARCH_MODEL_PROVIDER'
    value: 'azure'
  }
  {
    name: 'AZURE_OPENAI_ENDPOINT'
    value: openAiEndpoint
  }
  {
    name: 'RESEARCH_MODEL'
    value: modelDeploymentName
  }
  {
    name: 'RESEARCH_SEARCH_PROVIDER'
    value: searchProvider
  }
  {
    name: 'RESEARCH_ENVIRONMENT'
    value: deploymentEnvironment
  }
  {
    name: 'APPLICATIONINSIGHTS_CONNECTION_STRING'
    secretRef: 'applicationinsights-connection-string'
  }
]
var temporalApiKeyEnv = hasTemporalApiKey ? [
  {
    name: 'TEMPORAL_API_KEY'
    secretRef: 'temporal-api-key'
  }
] : []
var serperApiKeyEnv = hasSerperApiKey ? [
  {
    name: 'SERPER_API_KEY'
    secretRef: 'serper-api-key'
  }
] : []

// KEDA's temporal scaler: one replica per 5 waiting tasks, between min and max.
var backlogRule = [
  {
    name: 'temporal-backlog'
    custom: {
      type: 'temporal'
      metadata: {
        endpoint: temporalAddress
        namespace: temporalNamespace
        taskQueue: taskQueue
        queueTypes: 'workflow,activity'
        targetQueueSize: '5'
        enableTLS: hasTemporalApiKey ? 'true' : 'false'
      }
      auth: hasTemporalApiKey ? [
        {
          secretRef: 'temporal-api-key'
          triggerParameter: 'apiKey'
        }
      ] : []
    }
  }
]

resource worker 'Microsoft.App/containerApps@2024-03-01' = {
  name: workerName
  location: location
  tags: union(tags, {
    'azd-service-name': 'worker'
  })
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    managedEnvironmentId: environment.id
    configuration: {
      activeRevisionsMode: 'Single'
      registries: registries
      secrets: concat(appInsightsSecret, temporalSecret, serperSecret)
    }
    template: {
      containers: [
        {
          name: 'worker'
          image: image
          command: [
            'python'
            'worker.py'
          ]
          env: concat(databaseEnv, workerSettings, temporalApiKeyEnv, serperApiKeyEnv)
          resources: {
            cpu: json('0.5')
            memory: '1Gi'
          }
        }
      ]
      scale: {
        minReplicas: workerMinReplicas
        maxReplicas: workerMaxReplicas
        rules: workerScaleOnBacklog ? backlogRule : []
      }
    }
  }
}

// Started by azd after each deploy (infra/hooks/migrate.sh) with the image just deployed.
resource migrations 'Microsoft.App/jobs@2024-03-01' = {
  name: migrationJobName
  location: location
  tags: tags
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    environmentId: environment.id
    configuration: {
      triggerType: 'Manual'
      replicaTimeout: 600
      replicaRetryLimit: 1
      manualTriggerConfig: {
        parallelism: 1
        replicaCompletionCount: 1
      }
      registries: registries
    }
    template: {
      containers: [
        {
          name: 'migrate'
          image: image
          command: [
            'research'
            'init-db'
          ]
          env: databaseEnv
          resources: {
            cpu: json('0.25')
            memory: '0.5Gi'
          }
        }
      ]
    }
  }
}

output environmentName string = environment.name
output workerName string = worker.name
output migrationJobName string = migrations.name
