"""Process wiring shared by the worker and the starter: settings, database, Temporal client."""
