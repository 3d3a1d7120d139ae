"""Login, logout and the OpenID Connect redirect and callback: thin views over console.identity."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from console.identity import actions, oidc
from console.identity.core import Refused
from console.identity.methods import login_methods


class LoginView(auth_views.LoginView):
    """Django's login form, shown only when a password method is on, beside the single sign-on button."""

    template_name = "console/login.html"

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "methods": login_methods()}


class LogoutView(auth_views.LogoutView):
    """Django's logout; after an OpenID Connect session, on to the provider's end-session endpoint."""

    def post(self, request, *args, **kwargs):
        provider_url = actions.logout_redirect(request, request.build_absolute_uri(reverse("login")))
        response = super().post(request, *args, **kwargs)
        if not provider_url:
            return response
        # A page that goes on by itself: the form's CSP (form-action 'self') stops a cross-origin redirect.
        context = {"provider_url": provider_url, "label": settings.OIDC_LABEL}
        return render(request, "console/identity/provider_logout.html", context)


@never_cache
@require_GET
def oidc_login(request):
    if not oidc.configured():
        raise Http404("Single sign-on (OpenID Connect) is not configured.")
    try:
        return actions.start_oidc_login(
            request,
            redirect_uri=request.build_absolute_uri(reverse("sso_oidc_callback")),
            next_url=request.GET.get("next", ""),
        )
    except Refused as exc:
        messages.error(request, f"Single sign-on failed: {exc.reason}.")
        return redirect("login")


@never_cache
@require_GET
def oidc_callback(request):
    if not oidc.configured():
        raise Http404("Single sign-on (OpenID Connect) is not configured.")
    try:
        return redirect(actions.finish_oidc_login(request))
    except Refused as exc:
        messages.error(request, f"Single sign-on failed: {exc.reason}.")
        return redirect("login")
