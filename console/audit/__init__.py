"""audit area."""
