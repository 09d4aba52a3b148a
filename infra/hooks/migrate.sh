#!/bin/sh
# azd postdeploy hook: point the migrations job at the image azd just deployed, start it, and wait
# for it to finish. `research init-db` is idempotent (versioned migrations under an advisory lock),
# so running it after every deploy is safe. azd provides the variables: MIGRATION_JOB_NAME and
# AZURE_RESOURCE_GROUP are outputs of infra/main.bicep, SERVICE_WORKER_IMAGE_NAME is the image.
set -eu

: "${MIGRATION_JOB_NAME:?run through azd: the job name is an output of infra/main.bicep}"
: "${AZURE_RESOURCE_GROUP:?run through azd}"
: "${SERVICE_WORKER_IMAGE_NAME:?run through azd deploy: no worker image was deployed}"

az containerapp job update --name "$MIGRATION_JOB_NAME" --resource-group "$AZURE_RESOURCE_GROUP" \
  --image "$SERVICE_WORKER_IMAGE_NAME" --output none
execution=$(az containerapp job start --name "$MIGRATION_JOB_NAME" \
  --resource-group "$AZURE_RESOURCE_GROUP" --query name --output tsv)
echo "migrations: started $execution"

waited=0
while [ "$waited" -lt 600 ]; do
  status=$(az containerapp job execution show --name "$MIGRATION_JOB_NAME" \
    --resource-group "$AZURE_RESOURCE_GROUP" --job-execution-name "$execution" \
    --query properties.status --output tsv)
  case "$status" in
    Succeeded) echo "migrations: applied"; exit 0 ;;
    Failed | Stopped | Degraded)
      echo "migrations: $status; its log is in Log Analytics (ContainerAppConsoleLogs_CL," \
        "ContainerJobName_s == \"$MIGRATION_JOB_NAME\", execution $execution)" >&2
      exit 1 ;;
  esac
  sleep 10
  waited=$((waited + 10))
done
echo "migrations: still $status after 600 s" >&2
exit 1
