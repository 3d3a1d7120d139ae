"""configs area."""
