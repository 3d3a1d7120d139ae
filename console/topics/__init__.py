"""topics area."""
