"""Idempotency records keep their stored answer encrypted (a webhook's signing secret is in some)."""

import json

from django.db import migrations, models


def encrypt_answers(apps, schema_editor):
    from console import crypto

    Record = apps.get_model("console", "IdempotencyRecord")
    for record in Record.objects.exclude(response=None).only("pk", "response").iterator():
        token = crypto.encrypt(json.dumps(record.response))
        Record.objects.filter(pk=record.pk).update(response_encrypted=token)


def decrypt_answers(apps, schema_editor):
    from console import crypto

    Record = apps.get_model("console", "IdempotencyRecord")
    for record in Record.objects.exclude(response_encrypted="").only("pk", "response_encrypted").iterator():
        try:
            answer = json.loads(crypto.decrypt(record.response_encrypted))
        except crypto.SecretUnreadable:
            answer = None
        Record.objects.filter(pk=record.pk).update(response=answer)


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0020_change_group_delete_kinds"),
    ]

    operations = [
        migrations.AddField(
            model_name="idempotencyrecord",
            name="response_encrypted",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.RunPython(encrypt_answers, decrypt_answers),
        migrations.RemoveField(model_name="idempotencyrecord", name="response"),
    ]
