"""Schema for drift detection (issue 37 item 2)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("console", "0027_alerts")]

    operations: list = []
