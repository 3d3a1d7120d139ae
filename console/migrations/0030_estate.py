"""Schema for the estate as code (issue 37 item 3)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("console", "0029_change_windows")]

    operations: list = []
