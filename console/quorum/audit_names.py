"""The audit action names of the quorum area (per-controller log levels); stored as written.

A refusal is recorded under the name of the change it refused (``controller.log_level.change``).
"""

from __future__ import annotations

LOG_LEVEL_CHANGE = "controller.log_level.change"
LOG_LEVEL_VALIDATE = "controller.log_level.validate"
