"""telemetry area."""
