from django.db import migrations, models


class Migration(migrations.Migration):
    """Paced reassignments (issue 39 item 8)."""

    dependencies = [
        ("console", "0033_topic_namespace_rules"),
    ]

    operations = [
        migrations.AddField(
            model_name="reassignment",
            name="broker_throttles",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="reassignment",
            name="follower_throttle_bytes_per_s",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="reassignment",
            name="leader_throttle_bytes_per_s",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="reassignment",
            name="max_moves_per_broker",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="reassignment",
            name="paused",
            field=models.BooleanField(default=False),
        ),
    ]
