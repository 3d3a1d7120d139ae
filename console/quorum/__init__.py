"""quorum area."""
