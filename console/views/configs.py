"""Config pages: a topic's or a broker's configs, and the edit flow (diff → validate only → apply)."""

from __future__ import annotations

from functools import partial

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from console import access
from console.configs import actions as configs
from console.configs import held as configs_held
from console.forms.configs import ConfigChangesForm
from console.kafka import KafkaOperationError
from console.views import htmx, posting
from console.views._helpers import get_cluster_for_user
from console.views.posting import gated_context


@login_required
@require_http_methods(["GET", "POST"])
def topic_configs(request, name: str, topic: str):
    cluster = get_cluster_for_user(request, name)
    back = reverse("topic_detail", kwargs={"name": cluster.name, "topic": topic})
    return _config_page(request, cluster, configs.topic_resource(topic), f"Topic {topic}", back)


@login_required
@require_http_methods(["GET", "POST"])
def broker_configs(request, name: str, broker: str = ""):
    cluster = get_cluster_for_user(request, name)
    title = f"Broker {broker}" if broker else "Cluster-wide broker defaults"
    return _config_page(request, cluster, configs.broker_resource(broker), title, None, brokers=True)


def overrides_only(request) -> bool:
    """The "overrides only" filter of the config pages: ``?overrides=1`` (a checkbox sends "on")."""
    return request.GET.get("overrides", "") in ("1", "on", "true")


def _config_page(request, cluster, resource, title: str, back: str | None, brokers: bool = False):
    """GET shows the configs; POST runs one step of the edit: preview, validate or apply."""
    can_edit = access.can(request.user, cluster, access.MANAGE_CONFIGS)
    if request.method == "POST" and not can_edit:
        raise PermissionDenied(
            f"You need the '{access.MANAGE_CONFIGS}' permission on cluster '{cluster.name}'."
        )
    form = ConfigChangesForm(request.POST or None)
    context = {
        "cluster": cluster,
        "resource": resource,
        "title": title,
        "back": back,
        "form": form,
        "can_edit": can_edit,
        "diffs": None,
        "result": None,
        "view": None,
        "error": None,
        "overrides_only": overrides_only(request),
        **gated_context(request, cluster, configs_held.gate_kind(resource.type)),
    }
    context["gated"] = can_edit and context["gated"]
    if request.method == "POST" and form.is_valid():
        changes = form.cleaned_data["changes"]
        preview = request.POST.get("action", "preview") == "preview"
        posted = posting.preview_or_run(
            request,
            cluster,
            context,
            form=form,
            preview=partial(
                configs.preview_changes,
                actor=request.user,
                cluster=cluster,
                resource=resource,
                changes=changes,
            ),
            prepare=partial(configs_held.prepare_config, resource=resource, changes=changes),
            run=partial(configs.alter_configs, resource=resource, changes=changes),
        )
        if posted.held:
            return posted.held
        if preview:
            context["diffs"] = posted.result
        else:
            result = posted.result
            if result is not None:
                context["result"], context["diffs"] = result, result.diffs
                if result.ok and not result.validate_only:
                    messages.success(request, f"{title}: {len(result.diffs)} config change(s) applied.")
                    if result.unconfirmed:
                        messages.warning(request, result.message)
                    return htmx.redirect_to(request, request.path)
    if request.method == "POST":
        form.hide_secret_values({d.name for d in context["diffs"] or () if d.sensitive})
    posted = request.method == "POST"
    if not (posted and htmx.wants_fragment(request)):  # the page shows the configs; the edit fragment not
        try:
            context["view"] = configs.describe_configs(
                actor=request.user, cluster=cluster, resource=resource, overrides_only=overrides_only(request)
            )
            context["brokers"] = configs.broker_ids(cluster) if brokers else []
        except KafkaOperationError as exc:
            context["error"] = exc
    error = context["error"]
    status = 404 if error is not None and error.name == "UNKNOWN_TOPIC_OR_PARTITION" else 200
    fragment = "console/_config_edit.html" if posted else None
    return htmx.fragment_or_page(request, "console/config_page.html", fragment, context, status=status)
