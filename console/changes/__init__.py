"""Change control (four eyes for operator actions): a per-cluster policy says which action kinds need
approval; such an action becomes a change request carrying its exact payload and dry run, and runs
unchanged (pinned by its digest) once approved, after a drift check against the cluster.

``door`` (the one entry pages, API and CLI use: run, hold for review, or break glass), ``actions``
(policy, submit, approve, drift, execute, break glass), ``gate`` (which kinds a policy holds; the
areas' gate check, which also refuses every governed action while a freeze window is in force),
``kinds`` (the registry the areas declare their held kinds in), ``schedule`` (an approved change runs
at a chosen time, never before, never in a freeze: the tick, the claim, the refusal at its time), and
the review queue self-service requests share: ``queue``, ``approvals``, ``notify``. It imports no
area; the windows it checks are ``console.windows`` (below it)."""
