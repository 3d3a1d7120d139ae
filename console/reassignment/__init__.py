"""reassignment area."""
