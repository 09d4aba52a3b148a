"""How much one worker process takes on at once (worker.py), kept apart so a bench can run a
worker like it without importing the application."""

ACTIVITY_SLOTS = 500  # activities and, apart, local activities
WORKFLOW_TASK_SLOTS = 200
POLLERS = 10  # of each task queue kind
