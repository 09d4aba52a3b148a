// Azure Database for PostgreSQL Flexible Server for the ledger: Microsoft Entra authentication
// only (no passwords), TLS required, the worker's identity its Entra administrator (it applies
// the migrations and owns the `research` schema). Smallest size: Burstable B1ms, 32 GB.
param name string
param location string
param tags object
param databaseName string
param administratorName string
param administratorPrincipalId string
param skuName string
param skuTier string
param storageSizeGB int
param postgresVersion string

// Geo-redundant backups and zone-redundant high availability are off: they double the bill of
// the smallest deployment (turn them on for production).
resource server 'Microsoft.DBforPostgreSQL/flexibleServers@2024-08-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: skuName
    tier: skuTier
  }
  properties: {
    version: postgresVersion
    storage: {
      storageSizeGB: storageSizeGB
      autoGrow: 'Enabled'
    }
    backup: {
      backupRetentionDays: 7
      geoRedundantBackup: 'Disabled'
    }
    highAvailability: {
      mode: 'Disabled'
    }
    network: {
      publicNetworkAccess: 'Enabled'
    }
    authConfig: {
      activeDirectoryAuth: 'Enabled'
      passwordAuth: 'Disabled'
      tenantId: subscription().tenantId
    }
  }
}

// One change at a time: the server refuses concurrent updates (ServerIsBusy).
resource database 'Microsoft.DBforPostgreSQL/flexibleServers/databases@2024-08-01' = {
  parent: server
  name: databaseName
  properties: {
    charset: 'UTF8'
    collation: 'en_US.utf8'
  }
}

resource requireTls 'Microsoft.DBforPostgreSQL/flexibleServers/configurations@2024-08-01' = {
  parent: server
  name: 'require_secure_transport'
  properties: {
    value: 'ON'
    source: 'user-override'
  }
  dependsOn: [
    database
  ]
}

// 0.0.0.0: connections from Azure services only (the Container Apps environment has no fixed
// outbound address without a virtual network); each still needs an Entra token and TLS.
resource azureServices 'Microsoft.DBforPostgreSQL/flexibleServers/firewallRules@2024-08-01' = {
  parent: server
  name: 'AllowAllAzureServicesAndResourcesWithinAzureIps'
  properties: {
    startIpAddress: '0.0.0.0'
    endIpAddress: '0.0.0.0'
  }
  dependsOn: [
    requireTls
  ]
}

resource administrator 'Microsoft.DBforPostgreSQL/flexibleServers/administrators@2024-08-01' = {
  parent: server
  name: administratorPrincipalId
  properties: {
    principalName: administratorName
    principalType: 'ServicePrincipal'
    tenantId: subscription().tenantId
  }
  dependsOn: [
    azureServices
  ]
}

output name string = server.name
output fqdn string = server.properties.fullyQualifiedDomainName
output databaseName string = database.name
output administratorName string = administrator.properties.principalName
