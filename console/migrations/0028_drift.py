"""Schema for drift detection (issue 37 item 2): each cluster's last look at Kafka."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("console", "0027_alerts")]

    operations = [
        migrations.CreateModel(
            name="DriftBaseline",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("taken_at", models.DateTimeField()),
                ("audit_mark", models.BigIntegerField(default=0)),
                ("state", models.BinaryField()),
                ("topics", models.IntegerField(default=0)),
                ("acls", models.IntegerField(default=0)),
                (
                    "cluster",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="drift_baseline",
                        to="console.cluster",
                    ),
                ),
            ],
        ),
    ]
