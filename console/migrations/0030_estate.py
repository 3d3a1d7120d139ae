"""Schema for the estate as code (issue 37 item 3): the held kind estate.apply."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("console", "0029_change_windows")]

    operations = [
        migrations.AlterField(
            model_name="changerequest",
            name="kind",
            field=models.CharField(
                choices=[
                    ("topic.create", "New topic"),
                    ("topic.config", "Topic config change"),
                    ("topic.partitions", "Partition increase"),
                    ("topic.delete", "Topic deletion"),
                    ("acl.create", "ACL for a principal"),
                    ("group.offsets.reset", "Consumer group offset reset"),
                    ("change.config", "Config change (held for approval)"),
                    ("change.topic.delete", "Topic deletion (held for approval)"),
                    ("change.acl", "ACL change (held for approval)"),
                    ("change.group.reset", "Offset reset (held for approval)"),
                    ("change.reassignment", "Reassignment (held for approval)"),
                    ("change.topic.create", "Topic creation (held for approval)"),
                    ("change.topic.partitions", "Partition increase (held for approval)"),
                    ("change.throttle", "Throttle change (held for approval)"),
                    ("change.election", "Leader election (held for approval)"),
                    ("change.group.delete", "Consumer group deletion (held for approval)"),
                    ("change.group.offsets.delete", "Committed offsets deletion (held for approval)"),
                    ("estate.apply", "Estate plan (always held for approval)"),
                ],
                max_length=32,
            ),
        ),
    ]
