"""The audit action names of the quorum area (per-controller log levels); stored as written.

A refusal is recorded under the name of the change it refused (``controller.log_level.change``).
"""

from __future__ import annotations

LOG_LEVEL_CHANGE = "controller.log_level.change"
LOG_LEVEL_VALIDATE = "controller.log_level.validate"

# The KRaft lifecycle (features.py, voters.py, unregister.py): requested, then the outcome (and a refusal).
FEATURES_UPDATE = "kraft.features.update"  # UpdateFeatures applied
FEATURES_VALIDATE = "kraft.features.validate"  # UpdateFeatures validate-only (the dry run): one event
VOTER_ADD = "kraft.voter.add"  # AddRaftVoter (KIP-853)
VOTER_REMOVE = "kraft.voter.remove"  # RemoveRaftVoter (KIP-853)
BROKER_UNREGISTER = "kraft.broker.unregister"  # UnregisterBroker
