"""Sessions end CONSOLE_SESSION_MAX_AGE_S after the login, however active: the user logs in again,
and their identity provider's groups (so their roles) are read afresh."""

from __future__ import annotations

import time

from django.conf import settings
from django.contrib.auth import logout
from django.contrib.auth.views import redirect_to_login

LOGIN_AT = "console_login_at"


class SessionAgeMiddleware:
    """Placed after AuthenticationMiddleware. Stamps a session at its first request and logs it out
    once it is older than the limit (Django's own expiry is renewed by each save of the session)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            started = request.session.get(LOGIN_AT)
            now = time.time()
            if not isinstance(started, int | float):
                request.session[LOGIN_AT] = now
            elif now - started > settings.CONSOLE_SESSION_MAX_AGE_S:
                logout(request)
                return redirect_to_login(request.get_full_path())
        return self.get_response(request)
