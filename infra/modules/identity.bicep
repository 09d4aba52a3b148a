// The worker's user-assigned managed identity: it pulls the image, reads Key Vault secrets, calls
// Azure OpenAI and signs in to PostgreSQL (each through its own least-privilege grant).
param name string
param location string
param tags object

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: name
  location: location
  tags: tags
}

output id string = identity.id
output name string = identity.name
output principalId string = identity.properties.principalId
output clientId string = identity.properties.clientId
