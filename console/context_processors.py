"""Template context shared by every page."""

from __future__ import annotations


def navigation(request):
    return {}
