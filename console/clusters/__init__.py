"""clusters area."""
