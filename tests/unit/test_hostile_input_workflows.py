"""Hostile input to the workflow forms: ACLs, requests and change control, reassignments, elections,
capacity, quorum, audit, login, consumer groups, API tokens, notification channels, the message
browser and its data access.

See test_hostile_input.py for what every case asserts and the coverage check.
"""

from __future__ import annotations

import pytest

from tests.unit.hostile_harness import make_test
from tests.unit.hostile_routes import ROUTES, hostile_env  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db
HERE = (
    "acl_new",
    "quotas",
    "scram_users",
    "scram_delete",
    "topic_purge",
    "quorum_features",
    "quorum_voters",
    "broker_unregister",
    "broker_log_dirs",
    "log_dir_plan",
    "log_dir_move_cancel",
    "transaction_abort",
    "acl_apply",
    "acl_list",
    "acl_delete",
    "acl_effective",
    "request_new",
    "request_approve",
    "request_reject",
    "request_cancel",
    "request_rules",
    "change_policy",
    "reassign_new",
    "reassign_external_cancel",
    "throttle_cleanup",
    "election_page",
    "reassign_throttle",
    "reassign_cancel",
    "reassign_pause",
    "reassign_resume",
    "reassign_export",
    "capacity_run",
    "capacity_snapshot",
    "controller_detail",
    "audit_verify_all",
    "audit_list",
    "audit_export_csv",
    "audit_export_jsonl",
    "login",
    "logout",
    "group_reset",
    "group_delete",
    "group_offsets_delete",
    "group_list",
    "share_group_reset",
    "share_group_delete",
    "account_tokens",
    "account_token_revoke",
    "notify_channels",
    "notify_channel",
    "notify_channel_delete",
    "notify_channel_test",
    "windows_page",
    "window_end",
    "estate_plan",
    "estate_submit",
    "alert_acknowledge",
    "alert_silence_create",
    "alert_silence_end",
    "alert_rule_set",
    "window_settings",
    "change_schedule",
    "change_unschedule",
    "review_queue",
    "messages",
    "messages_produce",
    "data_access",
    "data_grant_remove",
    "masking_rule_remove",
)

for _name in HERE:
    globals()[f"test_hostile_{_name}"] = make_test(ROUTES[_name])
