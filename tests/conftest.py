import os

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
