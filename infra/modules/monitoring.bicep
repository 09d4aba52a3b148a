// Log Analytics (the Container Apps environment's logs) and a workspace-based Application Insights
// (the worker's traces, logs and metrics through the Azure Monitor exporter).
param logAnalyticsName string
param appInsightsName string
param location string
param tags object

resource logAnalytics 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: 30
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: appInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'other'
    WorkspaceResourceId: logAnalytics.id
  }
}

output logAnalyticsName string = logAnalytics.name
output appInsightsName string = appInsights.name
