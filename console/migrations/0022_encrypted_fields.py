"""Encrypted columns use console/crypto.py's field classes, which key rotation finds (no schema change)."""

from django.db import migrations

import console.crypto


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0021_idempotency_response_encrypted"),
    ]

    operations = [
        migrations.AlterField(
            model_name="changerequest",
            name="payload",
            field=console.crypto.EncryptedJSONField(default=dict),
        ),
        migrations.AlterField(
            model_name="cluster",
            name="sasl_password_encrypted",
            field=console.crypto.EncryptedTextField(blank=True, editable=False),
        ),
        migrations.AlterField(
            model_name="idempotencyrecord",
            name="response_encrypted",
            field=console.crypto.EncryptedTextField(blank=True, default=""),
        ),
        migrations.AlterField(
            model_name="notificationchannel",
            name="secret_encrypted",
            field=console.crypto.EncryptedTextField(blank=True),
        ),
        migrations.AlterField(
            model_name="notificationchannel",
            name="url_encrypted",
            field=console.crypto.EncryptedTextField(blank=True),
        ),
    ]
