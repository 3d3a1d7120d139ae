# The keyed audit chain: the verified-up-to marker on the chain head, and the cut-over event.

from django.db import migrations, models
from django.utils import timezone

REKEY_ACTION = "audit.rekey"


def cut_over(apps, schema_editor):
    """On a database that already has (unkeyed, SHA-256) events, append one keyed audit.rekey event.

    It names the last legacy event (id, hash) and links to it; its HMAC under AUDIT_HMAC_KEY makes that
    claim unforgeable, so the verifier checks events up to it with the legacy rule and every later event
    with the key. Nothing is re-hashed: re-hashing would launder any tampering done before. The legacy
    events stay exactly as trustworthy as they were (an unkeyed chain) up to this cut-over.
    """
    from console.models.audit import event_payload, keyed_hash

    AuditEvent = apps.get_model("console", "AuditEvent")
    AuditTarget = apps.get_model("console", "AuditTarget")
    AuditChainHead = apps.get_model("console", "AuditChainHead")
    head = AuditChainHead.objects.filter(pk=1).first()
    if head is None or head.last_id == 0:
        return  # a new trail: every event is keyed from the first one
    event = AuditEvent(
        id=head.last_id + 1,
        created_at=timezone.now(),
        actor_id=None,
        actor_name="system",
        on_behalf_of="",
        source_ip=None,
        cluster_id=None,
        cluster_name="",
        action=REKEY_ACTION,
        targets=["audit:trail"],
        params={
            "legacy_up_to": {"id": head.last_id, "hash": head.last_hash},
            "scheme": "hmac-sha256",
            "legacy_scheme": "sha256",
        },
        before=None,
        after=None,
        outcomes={},
        outcome="success",
        operation_id=None,
        request_id="",
        prev_hash=head.last_hash,
    )
    event.hash = keyed_hash(event_payload(event))
    event.save(force_insert=True)
    AuditTarget.objects.create(event_id=event.id, target="audit:trail", name="trail")
    AuditChainHead.objects.filter(pk=1).update(last_id=event.id, last_hash=event.hash)


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0009_owed_outcomes'),
    ]

    operations = [
        migrations.AddField(
            model_name='auditchainhead',
            name='verified_mac',
            field=models.CharField(blank=True, default='', max_length=64),
        ),
        migrations.AddField(
            model_name='auditchainhead',
            name='verified_marker',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(cut_over, migrations.RunPython.noop),
    ]
