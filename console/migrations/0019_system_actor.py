"""The system actor becomes a marked row (SystemActor) created here, never by a login."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def create_system_actor(apps, schema_editor):
    from console.system_actor import ensure_system_actor

    ensure_system_actor(
        User=apps.get_model(*settings.AUTH_USER_MODEL.split(".")),
        SystemActor=apps.get_model("console", "SystemActor"),
        IdentityLink=apps.get_model("console", "IdentityLink"),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0018_notifications"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="SystemActor",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("singleton", models.BooleanField(default=True, editable=False, unique=True)),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.RunPython(create_system_actor, migrations.RunPython.noop),
    ]
