"""Routes of the log-dir area under /c/<name>/: a broker's log dirs (beside the broker's page), the
plan-file page and a move's progress."""

from __future__ import annotations

from django.urls import path

from console.views import logdirs

urlpatterns = [
    path("brokers/<int:broker>/log-dirs/", logdirs.broker_log_dirs, name="broker_log_dirs"),
    path("log-dir-moves/plan/", logdirs.log_dir_plan, name="log_dir_plan"),
    path("log-dir-moves/<int:op_id>/", logdirs.log_dir_move, name="log_dir_move"),
    path("log-dir-moves/<int:op_id>/progress/", logdirs.log_dir_move_progress, name="log_dir_move_progress"),
    path("log-dir-moves/<int:op_id>/cancel/", logdirs.log_dir_move_cancel, name="log_dir_move_cancel"),
]
