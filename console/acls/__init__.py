"""acls area."""
