"""PySpark jobs over the telemetry snapshot lake (issue: telemetry pipeline)."""
