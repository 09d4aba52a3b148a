// Key Vault for the worker's secrets: the Temporal Cloud API key, the Serper key and the
// Application Insights connection string. The worker's identity may only read secrets (Key Vault
// Secrets User, on this vault); the person deploying may also set them (to rotate keys).
param name string
param location string
param tags object
param readerPrincipalId string
@description('Object id of the person or pipeline running azd (may set secrets); empty: none.')
param operatorPrincipalId string = ''
param appInsightsName string
@secure()
param temporalApiKey string = ''
@secure()
param serperApiKey string = ''

var secretsUserRole = '4633458b-17de-408a-b874-0445c86b69e6' // Key Vault Secrets User
var secretsOfficerRole = 'b86a8fe4-44ce-4948-aee5-eccb2c155cd7' // Key Vault Secrets Officer

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  // checkov:skip=CKV_AZURE_109: the Container Apps environment has no virtual network, so the vault cannot filter by network; every read needs an Entra identity with a role on it
  // checkov:skip=CKV_AZURE_189: same reason: the worker resolves its secrets over the vault's public endpoint (Entra-authorised, TLS)
  name: name
  location: location
  tags: tags
  properties: {
    tenantId: subscription().tenantId
    sku: {
      family: 'A'
      name: 'standard'
    }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: 7
    enablePurgeProtection: true
    publicNetworkAccess: 'Enabled'
  }
}

resource appInsightsSecret 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = {
  // checkov:skip=CKV_AZURE_41: rewritten on every provision from the component itself; an expiry date would only stop the worker exporting
  parent: vault
  name: 'applicationinsights-connection-string'
  properties: {
    value: appInsights.properties.ConnectionString
    contentType: 'text/plain'
  }
}

resource temporalSecret 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = if (!empty(temporalApiKey)) {
  // checkov:skip=CKV_AZURE_41: Temporal Cloud API keys carry their own expiry (set when the key is created); README "Rotating keys"
  // checkov:skip=CKV_AZURE_114: contentType is set below; checkov reads a conditional (if) resource's body one level too deep
  parent: vault
  name: 'temporal-api-key'
  properties: {
    value: temporalApiKey
    contentType: 'text/plain'
  }
}

resource serperSecret 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = if (!empty(serperApiKey)) {
  // checkov:skip=CKV_AZURE_41: the key's lifetime is serper.dev's; an expiry date here would only stop searches; README "Rotating keys"
  // checkov:skip=CKV_AZURE_114: contentType is set below; checkov reads a conditional (if) resource's body one level too deep
  parent: vault
  name: 'serper-api-key'
  properties: {
    value: serperApiKey
    contentType: 'text/plain'
  }
}

resource secretsUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(vault.id, readerPrincipalId, secretsUserRole)
  scope: vault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', secretsUserRole)
    principalId: readerPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource secretsOfficer 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(operatorPrincipalId)) {
  name: guid(vault.id, operatorPrincipalId, secretsOfficerRole)
  scope: vault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', secretsOfficerRole)
    principalId: operatorPrincipalId
  }
}

output name string = vault.name
output uri string = vault.properties.vaultUri
output appInsightsSecretUri string = '${vault.properties.vaultUri}secrets/${appInsightsSecret.name}'
output temporalApiKeySecretUri string = empty(temporalApiKey) ? '' : '${vault.properties.vaultUri}secrets/temporal-api-key'
output serperApiKeySecretUri string = empty(serperApiKey) ? '' : '${vault.properties.vaultUri}secrets/serper-api-key'
output secretsUserRoleAssignmentId string = secretsUser.id
