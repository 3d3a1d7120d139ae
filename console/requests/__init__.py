"""requests area."""
