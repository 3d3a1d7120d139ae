"""A cluster's alerts page (console/alerts): open alerts with the acknowledge form, recently resolved
ones, silences (add, end), the rule settings (admins edit them); and the cluster overview's box of
open alerts, loaded into the overview by htmx. Each POST calls one area action; a refusal is shown
on its form (status 200), an unknown alert or silence is the page's 404."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from console import access, refusals
from console.alerts import actions, reads
from console.formatting import human_count
from console.forms.alerts import AcknowledgeForm, RuleForm, SilenceForm
from console.views import htmx, posting
from console.views._helpers import client_ip, get_cluster_for_user


def _fires_when(row: reads.RuleRow) -> str:
    if not row.unit:
        return "whenever it holds"
    t = row.threshold
    shown = human_count(int(t)) if float(t).is_integer() else f"{t:g}"
    return f"{'<' if row.below else '>'} {shown} {row.unit}"


def _rule_rows(cluster, edited: tuple[str, RuleForm] | None) -> list[dict]:
    out = []
    for row in reads.rule_rows(cluster):
        if edited and edited[0] == row.name:
            form = edited[1]
        else:
            initial = {
                "enabled": row.enabled,
                "threshold": row.threshold
                if row.customised and row.threshold != row.default_threshold
                else None,
                "severity": row.severity if row.severity != row.default_severity else "",
                "escalate_after_min": row.escalate_after_min,
            }
            form = RuleForm(initial=initial, auto_id=f"id_rule_{row.name}_%s")
        out.append({"rule": row, "fires_when": _fires_when(row), "form": form})
    return out


def _page(request, cluster, *, ack=None, silence_form=None, rule=None):
    """The alerts page; ``ack`` (alert id, form) and ``rule`` (name, form) are a refused form to show
    again in its row, ``silence_form`` the refused silence form."""
    can_manage = access.can(request.user, cluster, access.MANAGE_ALERTS)
    open_rows = []
    for alert in reads.open_alerts(cluster):
        form = ack[1] if ack and ack[0] == alert.pk else AcknowledgeForm(auto_id=f"id_ack_{alert.pk}_%s")
        open_rows.append({"alert": actions.describe_alert(alert), "form": form})
    gone = ack is not None and all(row["alert"]["id"] != ack[0] for row in open_rows)
    context = {
        "cluster": cluster,
        "errors": list(ack[1].non_field_errors()) if gone else [],  # its row is no longer open
        "open": open_rows,
        "resolved": [actions.describe_alert(a) for a in reads.recently_resolved(cluster)],
        "silences": [actions.describe_silence(s) for s in reads.active_silences(cluster)],
        "silence_form": silence_form or SilenceForm(),
        "rules": _rule_rows(cluster, rule),
        "can_manage": can_manage,
        "can_administer": access.can(request.user, cluster, access.ADMINISTER),
    }
    return render(request, "console/alerts.html", context)


def _posted(request, cluster, form, run) -> HttpResponse | None:
    """Run the action on the valid form's data (``run(data, who)`` -> the message to show, ``who``
    the actor, cluster and address keywords): the redirect back to the page when it ran, None when the
    form is invalid or the action refused it (the refusal then on the form)."""
    if not form.is_valid():
        return None
    who = {"actor": request.user, "cluster": cluster, "source_ip": client_ip(request)}
    try:
        text = run(form.cleaned_data, who)
    except refusals.SHOWN as exc:
        posting.refused(form, exc)
        return None
    messages.success(request, text)
    return redirect("alert_list", name=cluster.name)


@login_required
@require_GET
def alert_list(request, name: str):
    return _page(request, get_cluster_for_user(request, name))


@login_required
@require_GET
def alert_glance(request, name: str):
    """The overview's box: the open count and the most severe few (htmx loads it into the overview)."""
    cluster = get_cluster_for_user(request, name)
    seen = reads.glance(cluster)
    context = {
        "cluster": cluster,
        "count": seen.count,
        "worst": [actions.describe_alert(a) for a in seen.worst],
    }
    return htmx.fragment_or_page(request, "console/_alert_glance.html", None, context)  # the box either way


@login_required
@require_POST
def alert_acknowledge(request, name: str, alert_id: int):
    cluster = get_cluster_for_user(request, name, access.MANAGE_ALERTS)
    form = AcknowledgeForm(request.POST, auto_id=f"id_ack_{alert_id}_%s")

    def run(d, who) -> str:
        actions.acknowledge_alert(alert_id=alert_id, note=d["note"], **who)
        return f"Alert #{alert_id} acknowledged."

    return _posted(request, cluster, form, run) or _page(request, cluster, ack=(alert_id, form))


@login_required
@require_POST
def alert_silence_create(request, name: str):
    cluster = get_cluster_for_user(request, name, access.MANAGE_ALERTS)
    form = SilenceForm(request.POST)

    def run(d, who) -> str:  # an end time, when given, wins over the prefilled duration
        silence = actions.create_silence(
            rule=d["rule"], subject=d["subject"], duration=None if d["until"] else d["duration"] or None, until=d["until"],
            reason=d["reason"], **who,
        )  # fmt: skip
        return f"Silence #{silence.pk} set until {silence.expires_at:%Y-%m-%d %H:%M} UTC."

    return _posted(request, cluster, form, run) or _page(request, cluster, silence_form=form)


@login_required
@require_POST
def alert_silence_end(request, name: str, silence_id: int):
    cluster = get_cluster_for_user(request, name, access.MANAGE_ALERTS)
    try:
        actions.end_silence(
            actor=request.user, cluster=cluster, silence_id=silence_id, source_ip=client_ip(request)
        )
        messages.success(request, f"Silence #{silence_id} ended.")
    except refusals.SHOWN as exc:
        messages.error(request, refusals.text(exc))
    return redirect("alert_list", name=cluster.name)


@login_required
@require_POST
def alert_rule_set(request, name: str, rule: str):
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    form = RuleForm(request.POST, auto_id=f"id_rule_{rule}_%s")

    def run(d, who) -> str:
        actions.set_rule(rule=rule, **d, **who)
        return f"Rule '{rule}' saved."

    return _posted(request, cluster, form, run) or _page(request, cluster, rule=(rule, form))
