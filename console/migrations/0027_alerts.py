"""Schema for alerts (issue 37 item 1)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("console", "0026_cluster_summary")]

    operations: list = []
