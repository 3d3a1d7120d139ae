"""The SCRAM users page: the users with their mechanisms and iterations, a form to create or rotate a
credential (the password is never rendered back), and a delete with the user name typed to confirm;
admin only, held where the cluster's change control holds ``scram.alter``."""

from __future__ import annotations

from functools import partial

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from console import access, refusals
from console.forms.scram import ScramDeleteForm, ScramSetForm
from console.scram import actions, held, reads
from console.views import posting
from console.views._helpers import get_cluster_for_user
from console.views.posting import gated_context


@login_required
@require_http_methods(["GET", "POST"])
def scram_users(request, name: str):
    """GET lists the users; POST sets (creates or rotates) one credential."""
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    form = ScramSetForm(request.POST or None, initial={"user": request.GET.get("user", "")[:256]})
    context = {"cluster": cluster, "form": form, "result": None, **gated_context(request, cluster, held.GATE)}
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        change = {
            "user": d["user"],
            "mechanism": d["mechanism"],
            "iterations": d["iterations"],
            "password": d["password"],
        }
        posted = posting.run_or_hold(
            request,
            cluster,
            context,
            form=form,
            prepare=partial(held.prepare_set, **change),
            run=partial(actions.set_credential, **change),
        )
        answer = posting.answered(request, context, posted)
        if answer is not None:
            return answer
    try:
        context["listing"] = reads.list_page(
            actor=request.user, cluster=cluster, page=_page(request), per_page=reads.PAGE_SIZE
        )
    except refusals.SHOWN as exc:
        context["list_error"] = refusals.text(exc)
    query = request.GET.copy()
    query.pop("page", None)
    context["list_query"] = query.urlencode()
    return render(request, "console/scram.html", context)


def _page(request) -> int:
    """The list's page asked for (``?page=``); the first for anything that is not a page number."""
    asked = request.GET.get("page", "")
    return int(asked) if asked.isdigit() and 0 < len(asked) <= 9 else 1


@login_required
@require_http_methods(["GET", "POST"])
def scram_delete(request, name: str):
    """Delete one credential of a user (the user name typed to confirm)."""
    cluster = get_cluster_for_user(request, name, access.ADMINISTER)
    initial = {"user": request.GET.get("user", "")[:256], "mechanism": request.GET.get("mechanism", "")}
    form = ScramDeleteForm(request.POST or None, initial=initial)
    context = {"cluster": cluster, "form": form, "result": None, **gated_context(request, cluster, held.GATE)}
    context["user_name"] = (request.POST or request.GET).get("user", "")[:256]
    context["mechanism"] = (request.POST or request.GET).get("mechanism", "")[:32]
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        change = {"user": d["user"], "mechanism": d["mechanism"]}
        posted = posting.run_or_hold(
            request,
            cluster,
            context,
            form=form,
            run_actions=("delete",),
            prepare=partial(held.prepare_delete, **change),
            run=partial(actions.delete_credential, **change),
        )
        answer = posting.answered(
            request, context, posted, reverse("scram_users", kwargs={"name": cluster.name})
        )
        if answer is not None:
            return answer
    return render(request, "console/scram_delete.html", context)
