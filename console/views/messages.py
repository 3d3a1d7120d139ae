"""Message pages of a topic: the browser (a GET form: reading changes nothing and the URL is the query;
following polls a fragment with the cursor), the produce form, and the cluster's data-access page
(grants and masking rules). Permissions, masking and the audit trail are console/messages'."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console import access, refusals
from console.forms.messages import (
    BrowseForm,
    DataGrantForm,
    MaskingRuleForm,
    ProduceForm,
)
from console.kafka import KafkaOperationError
from console.messages import actions, grants, reads
from console.messages.core import ShownMessage, format_cursor
from console.views import htmx, posting
from console.views._helpers import client_ip, get_cluster_for_user, not_found_is_404

FOLD_CHARS = 600  # a value longer than this (or of more lines) is folded under its first line
FOLD_LINES = 12
POLL_S = 2


REPLAY_CHARS = 65536  # a longer message is not offered for replay (the page would carry it twice)
REPLAY_FIELDS = ("partition", "key", "value", "headers")


@dataclass(frozen=True)
class Row:
    """One message as the table shows it; ``replay`` the produce form's fields filled with it (or None)."""

    m: ShownMessage
    when: datetime | None
    folded: bool
    preview: str
    replay: dict | None


def _replay(m: ShownMessage) -> dict | None:
    """Offered for a message shown as it is (no rule changed it) whose key is text (kept exact: it
    picks the partition) and whose value is text or JSON (re-sent as shown)."""
    if m.masked_by or m.key_kind not in ("text", "null") or m.value_kind not in ("text", "json"):
        return None
    if len(m.key) + len(m.value) > REPLAY_CHARS:
        return None
    headers = "\n".join(f"{name}={value}" for name, value in m.headers)
    fields = {"partition": m.partition, "key": m.key, "value": m.value, "headers": headers}
    return {**fields, "from": f"{m.partition}:{m.offset}"}


def _row(m: ShownMessage, writer: bool) -> Row:
    when = None if m.timestamp is None else datetime.fromtimestamp(m.timestamp / 1000, tz=UTC)
    folded = len(m.value) > FOLD_CHARS or m.value.count("\n") >= FOLD_LINES
    preview = m.value.splitlines()[0][:120] if m.value else ""
    return Row(m, when, folded, preview, _replay(m) if writer else None)


def _follow_url(request, cursor: dict[int, int]) -> str:
    params = request.GET.copy()
    params["cursor"] = format_cursor(cursor)
    return f"{request.path}?{params.urlencode()}"


def _browse(request, cluster, topic: str, form: BrowseForm) -> tuple[dict, int]:
    """Read (the area checks data.read, masks and audits); the context and the page's status."""
    try:
        result = reads.browse(
            actor=request.user, cluster=cluster, topic=topic, query=form.query(), source_ip=client_ip(request)
        )
    except refusals.SHOWN as exc:  # bad input (BrowseInvalid): on the form, with the table's status
        posting.refused(form, exc)
        return {}, refusals.answer(exc).status
    except KafkaOperationError as exc:
        return {"error": refusals.text(exc)}, 200
    writer = grants.writable(request.user, cluster, topic)
    context = {"result": result, "rows": [_row(m, writer) for m in result.messages]}
    if form.cleaned_data["mode"] == "follow":
        context["follow_url"] = _follow_url(request, result.cursor)
    return context, 200


@login_required
@require_GET
def messages_page(request, name: str, topic: str):
    """The browser; in follow mode htmx polls it with the cursor for the messages that came since."""
    cluster = get_cluster_for_user(request, name)
    may_unmask = grants.may_unmask(request.user, cluster, topic)
    form = BrowseForm(request.GET or None, may_unmask=may_unmask)
    context = {"cluster": cluster, "topic": topic, "form": form, "poll_s": POLL_S}
    context["can_write"] = grants.writable(request.user, cluster, topic)
    if not form.is_bound:  # nothing asked yet: nothing read, but only for who may read
        grants.require(request.user, cluster, topic, grants.DATA_READ)
        return render(request, "console/messages.html", context)
    if htmx.wants_fragment(request):
        return _follow_poll(request, cluster, topic, form, context)
    status = 400
    if form.is_valid():
        found, status = _browse(request, cluster, topic, form)
        context.update(found)
    return render(request, "console/messages.html", context, status=status)


def _follow_poll(request, cluster, topic: str, form: BrowseForm, context: dict):
    """One poll of a follow: the new rows and the next poller, or (stopped, refused) the last answer."""
    stop = request.GET.get("stop") == "1" or not form.is_valid() or form.cleaned_data["mode"] != "follow"
    if not stop:
        try:
            found, status = _browse(request, cluster, topic, form)
        except Exception as exc:  # a refusal (the grant gone while following): said, and polling stops
            said = refusals.answer(exc)
            if said is None:
                raise
            found, status = {"error": said.text}, said.status
        context.update(found)
        stop = status != 200 or "error" in context
    return htmx.polled_fragment(request, "console/_messages_follow.html", context, finished=stop)


@login_required
@require_http_methods(["GET", "POST"])
def messages_produce(request, name: str, topic: str):
    cluster = get_cluster_for_user(request, name)
    grants.require(request.user, cluster, topic, grants.DATA_WRITE)
    if request.POST.get("action") == "fill":  # Replay from the browser: the form filled, nothing sent
        form = ProduceForm(initial={name: request.POST.get(name, "") for name in REPLAY_FIELDS})
    else:
        form = ProduceForm(request.POST or None)
    context = {"cluster": cluster, "topic": topic, "form": form, "produced": None}
    context["copied_from"] = request.POST.get("from", "") if not form.is_bound else ""
    if form.is_bound and form.is_valid():
        try:
            produced = actions.produce(
                actor=request.user,
                cluster=cluster,
                topic=topic,
                source_ip=client_ip(request),
                **form.message(),
            )
        except refusals.SHOWN as exc:
            posting.refused(form, exc)
        else:
            context["produced"] = produced
            query = f"mode=offset&partition={produced.partition}&offset={produced.offset}&count=1"
            context["read_back"] = reverse("messages", kwargs={"name": name, "topic": topic}) + "?" + query
    return render(request, "console/messages_produce.html", context)


def _data_access_context(request, cluster, grant_form, rule_form) -> dict:
    listed_grants, listed_rules = reads.data_access(actor=request.user, cluster=cluster)
    return {
        "cluster": cluster,
        "grant_form": grant_form,
        "rule_form": rule_form,
        "grants": listed_grants,
        "rules": listed_rules,
    }


@login_required
@require_http_methods(["GET", "POST"])
def data_access_page(request, name: str):
    """Who may read and write which topics' messages, and the masking rules (cluster admins)."""
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    adding = request.POST.get("add") if request.method == "POST" else None
    grant_form = DataGrantForm(request.POST if adding == "grant" else None, prefix="grant")
    rule_form = MaskingRuleForm(request.POST if adding == "rule" else None, prefix="rule")
    form, add = {"grant": (grant_form, actions.grant), "rule": (rule_form, actions.add_rule)}.get(
        adding, (None, None)
    )
    if form is not None and form.is_valid():
        try:
            add(actor=request.user, cluster=cluster, source_ip=client_ip(request), **form.cleaned_data)
        except refusals.SHOWN as exc:
            posting.refused(form, exc)
        else:
            flash.success(request, "Data grant added." if adding == "grant" else "Masking rule added.")
            return redirect("data_access", name=cluster.name)
    context = _data_access_context(request, cluster, grant_form, rule_form)
    return render(request, "console/data_access.html", context)


def _removed(request, name: str, remove, said: str, **which: int):
    """Remove a grant or a rule through the area's action (it checks cluster.admin and audits)."""
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    remove(actor=request.user, cluster=cluster, source_ip=client_ip(request), **which)
    flash.success(request, said)
    return redirect("data_access", name=cluster.name)


@login_required
@require_POST
@not_found_is_404
def data_grant_remove(request, name: str, grant_id: int):
    return _removed(request, name, actions.revoke, "Data grant removed.", grant_id=grant_id)


@login_required
@require_POST
@not_found_is_404
def masking_rule_remove(request, name: str, rule_id: int):
    return _removed(request, name, actions.remove_rule, "Masking rule removed.", rule_id=rule_id)
