import os

os.environ.setdefault("AGNO_TELEMETRY", "false")
