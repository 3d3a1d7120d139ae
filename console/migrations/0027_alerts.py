"""Schema for alerts (issue 37 item 1): rule settings, alerts, silences."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("console", "0026_cluster_summary")]

    operations = [
        migrations.CreateModel(
            name="AlertSilence",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("rule", models.CharField(blank=True, max_length=40)),
                ("subject", models.CharField(blank=True, max_length=300)),
                ("reason", models.TextField()),
                ("created_by_name", models.CharField(max_length=150)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("expires_at", models.DateTimeField()),
                ("ended_at", models.DateTimeField(blank=True, null=True)),
                (
                    "cluster",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="alert_silences",
                        to="console.cluster",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
            },
        ),
        migrations.CreateModel(
            name="Alert",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("rule", models.CharField(max_length=40)),
                ("subject", models.CharField(blank=True, max_length=300)),
                (
                    "severity",
                    models.CharField(
                        choices=[("warning", "Warning"), ("critical", "Critical")], max_length=10
                    ),
                ),
                (
                    "state",
                    models.CharField(
                        choices=[
                            ("firing", "Firing"),
                            ("acknowledged", "Acknowledged"),
                            ("resolved", "Resolved"),
                        ],
                        default="firing",
                        max_length=12,
                    ),
                ),
                ("summary", models.CharField(max_length=300)),
                ("value", models.FloatField(blank=True, null=True)),
                ("threshold", models.FloatField(blank=True, null=True)),
                ("details", models.JSONField(blank=True, default=dict)),
                ("fired_at", models.DateTimeField()),
                ("last_seen_at", models.DateTimeField()),
                ("acknowledged_at", models.DateTimeField(blank=True, null=True)),
                ("acknowledged_by_name", models.CharField(blank=True, max_length=150)),
                ("ack_note", models.TextField(blank=True)),
                ("escalated_at", models.DateTimeField(blank=True, null=True)),
                ("resolved_at", models.DateTimeField(blank=True, null=True)),
                (
                    "cluster",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="alerts",
                        to="console.cluster",
                    ),
                ),
            ],
            options={
                "ordering": ["-fired_at", "-id"],
                "indexes": [models.Index(fields=["cluster", "state"], name="alert_cluster_state")],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("state__in", ["firing", "acknowledged"])),
                        fields=("cluster", "rule", "subject"),
                        name="one_open_alert_per_subject",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="AlertRuleSetting",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("rule", models.CharField(max_length=40)),
                ("enabled", models.BooleanField(default=True)),
                ("threshold", models.FloatField(blank=True, null=True)),
                (
                    "severity",
                    models.CharField(
                        blank=True, choices=[("warning", "Warning"), ("critical", "Critical")], max_length=10
                    ),
                ),
                ("escalate_after_min", models.PositiveIntegerField(blank=True, null=True)),
                ("updated_by_name", models.CharField(blank=True, max_length=150)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "cluster",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="alert_settings",
                        to="console.cluster",
                    ),
                ),
            ],
            options={
                "ordering": ["cluster_id", "rule"],
                "constraints": [
                    models.UniqueConstraint(fields=("cluster", "rule"), name="one_setting_per_rule")
                ],
            },
        ),
    ]
