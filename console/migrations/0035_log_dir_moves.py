from django.db import migrations


class Migration(migrations.Migration):
    """Moves between a broker's log dirs (issue 39 item 7)."""

    dependencies = [
        ("console", "0034_paced_reassignments"),
    ]

    operations = []
