"""Schema for change windows and scheduled changes (issue 37 item 4)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0028_drift"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="WindowSettings",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("maintenance_only", models.BooleanField(default=False)),
                ("updated_by_name", models.CharField(blank=True, max_length=150)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "cluster",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="window_settings",
                        to="console.cluster",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="ChangeWindow",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("freeze", "Freeze (no changes, except break glass)"),
                            ("maintenance", "Maintenance window"),
                        ],
                        max_length=16,
                    ),
                ),
                ("reason", models.CharField(max_length=500)),
                ("starts_at", models.DateTimeField()),
                ("ends_at", models.DateTimeField(blank=True, null=True)),
                ("weekday", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("start_time", models.TimeField(blank=True, null=True)),
                ("duration_min", models.PositiveIntegerField(blank=True, null=True)),
                ("time_zone", models.CharField(default="UTC", max_length=64)),
                ("created_by_name", models.CharField(max_length=150)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("ended_at", models.DateTimeField(blank=True, null=True)),
                ("ended_by_name", models.CharField(blank=True, max_length=150)),
                (
                    "cluster",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="change_windows",
                        to="console.cluster",
                    ),
                ),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["starts_at", "id"],
                "indexes": [models.Index(fields=["cluster", "kind"], name="console_cha_cluster_6c467c_idx")],
            },
        ),
        migrations.CreateModel(
            name="ScheduledChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("run_at", models.DateTimeField(db_index=True)),
                (
                    "state",
                    models.CharField(
                        choices=[
                            ("waiting", "Scheduled"),
                            ("queued", "Queued to run"),
                            ("refused", "Refused at its time"),
                            ("cancelled", "Cancelled"),
                        ],
                        default="waiting",
                        max_length=16,
                    ),
                ),
                ("scheduled_by_name", models.CharField(max_length=150)),
                ("taken_by", models.CharField(blank=True, max_length=128)),
                ("note", models.TextField(blank=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "request",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="schedule",
                        to="console.changerequest",
                    ),
                ),
            ],
            options={
                "ordering": ["run_at", "id"],
                "indexes": [models.Index(fields=["state", "run_at"], name="console_sch_state_c4290e_idx")],
            },
        ),
    ]
