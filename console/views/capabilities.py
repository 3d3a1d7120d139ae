"""Rendering "unavailable in controller mode" for any page (KIP-919), from ``clusters/capabilities.py``."""

from __future__ import annotations

from django.shortcuts import render

from console.clusters import capabilities


def unavailable_page(request, cluster, key: str, title: str | None = None):
    """The whole page saying why a section is not offered on this cluster's connection (status 200).

    Usage in a view::

        if capabilities.unavailable_reason(cluster, "topics"):
            return unavailable_page(request, cluster, "topics")
    """
    section = capabilities.section(key)
    return render(
        request,
        "console/controller_mode_unavailable.html",
        {
            "cluster": cluster,
            "title": title or section.label,
            "reason": capabilities.unavailable_reason(cluster, key) or "",
            "capabilities": capabilities.capability_table(cluster),
        },
    )
