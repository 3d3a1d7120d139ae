"""The user's own API tokens: list, create (the secret is shown once, on the answer to the POST), revoke."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from console.forms.api_tokens import TokenForm
from console.identity import tokens
from console.views._helpers import client_ip


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def token_page(request):
    form = TokenForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        created = tokens.create_token(
            actor=request.user,
            name=form.cleaned_data["name"],
            scope=form.cleaned_data["scope"],
            days=form.cleaned_data["days"],
            source_ip=client_ip(request),
        )
        form = TokenForm()
    context = {
        "form": form,
        "created": created,
        "tokens": tokens.tokens_of(request.user),
        "docs_url": reverse("api:docs"),
        "schema_url": reverse("api:schema"),
    }
    return render(request, "console/account/tokens.html", context)


@login_required
@require_POST
def token_revoke(request, token_id: int):
    token = tokens.revoke_token(actor=request.user, token_id=token_id, source_ip=client_ip(request))
    if token is None:
        raise Http404("No such live token of yours.")
    messages.success(request, f"Token '{token.name}' revoked.")
    return redirect("account_tokens")
