// The container registry azd pushes the worker image to (built remotely: no local Docker needed),
// pulled by the worker's identity with AcrPull only.
param name string
param location string
param tags object
param pullerPrincipalId string

var acrPullRole = '7f951dda-4ed3-4680-a7ca-43fe172d538d' // AcrPull

resource registry 'Microsoft.ContainerRegistry/registries@2023-07-01' = {
  // checkov:skip=CKV_AZURE_139: Basic SKU has no private endpoints; pushes and pulls need Entra auth (admin user off)
  // checkov:skip=CKV_AZURE_163: vulnerability scanning is Defender for Containers, a subscription plan, not a registry setting
  // checkov:skip=CKV_AZURE_166: quarantine needs the Premium SKU (Basic: the smallest bill)
  // checkov:skip=CKV_AZURE_233: zone redundancy needs the Premium SKU (Basic: the smallest bill)
  name: name
  location: location
  tags: tags
  sku: {
    name: 'Basic'
  }
  properties: {
    adminUserEnabled: false
    anonymousPullEnabled: false
  }
}

resource pull 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(registry.id, pullerPrincipalId, acrPullRole)
  scope: registry
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', acrPullRole)
    principalId: pullerPrincipalId
    principalType: 'ServicePrincipal'
  }
}

output name string = registry.name
output loginServer string = registry.properties.loginServer
output pullRoleAssignmentId string = pull.id
