// Azure OpenAI with one model deployment. Keys are off (disableLocalAuth): the worker signs in
// with its managed identity, which holds Cognitive Services OpenAI User on this account only.
param name string
param location string
param tags object
param userPrincipalId string
param deploymentName string
param modelName string
param modelVersion string
param deploymentSku string
param capacity int

var openAiUserRole = '5e0bd9bd-7b93-4f28-af87-19fc36ad61bd' // Cognitive Services OpenAI User

resource account 'Microsoft.CognitiveServices/accounts@2024-10-01' = {
  // checkov:skip=CKV_AZURE_134: the worker runs outside a virtual network and calls the public endpoint; keys are disabled, so every call needs an Entra identity with a role here
  name: name
  location: location
  tags: tags
  kind: 'OpenAI'
  sku: {
    name: 'S0'
  }
  identity: {
    type: 'SystemAssigned'
  }
  properties: {
    customSubDomainName: name
    disableLocalAuth: true
    publicNetworkAccess: 'Enabled'
  }
}

resource deployment 'Microsoft.CognitiveServices/accounts/deployments@2024-10-01' = {
  parent: account
  name: deploymentName
  sku: {
    name: deploymentSku
    capacity: capacity
  }
  properties: {
    model: {
      format: 'OpenAI'
      name: modelName
      version: modelVersion
    }
  }
}

resource openAiUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(account.id, userPrincipalId, openAiUserRole)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', openAiUserRole)
    principalId: userPrincipalId
    principalType: 'ServicePrincipal'
  }
}

output name string = account.name
output endpoint string = account.properties.endpoint
output deploymentName string = deployment.name
output userRoleAssignmentId string = openAiUser.id
