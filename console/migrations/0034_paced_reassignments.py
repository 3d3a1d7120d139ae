from django.db import migrations


class Migration(migrations.Migration):
    """Paced reassignments (issue 39 item 8)."""

    dependencies = [
        ("console", "0033_topic_namespace_rules"),
    ]

    operations = []
