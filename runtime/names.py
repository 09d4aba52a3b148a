"""The names telemetry reports under: the service and the loggers' root. A leaf (it imports
nothing), so `runtime.telemetry`, `runtime.exporters` and `runtime.startup` share them without
importing one another in a circle."""

SERVICE_NAME = "research-agent"
LOGGER = "research"
