"""Change control (four eyes for operator actions): a per-cluster policy says which action kinds need
approval; such an action becomes a change request carrying its exact payload and dry run, and runs
unchanged (pinned by its digest) once approved, after a drift check against the cluster."""
