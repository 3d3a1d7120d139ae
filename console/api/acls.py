"""API: ACLs (list, change, delete by filter with its preview, effective access)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.response import Response

from console import access
from console.acls import actions as acls
from console.acls import core as acl_core
from console.acls import held as acls_held
from console.api import serializers as s
from console.api.base import ApiView, form_data, page_json, plain, reads, writes
from console.api.held import hold
from console.forms.acls import AclExportForm, AclFilterForm, EffectiveAccessForm


def _bindings(items) -> list:
    out, errors = [], []
    for i, item in enumerate(items):
        binding, problems = acl_core.validate_binding(item)
        errors += [f"binding {i}: {p}" for p in problems]
        if binding is not None:
            out.append(binding)
    if errors:
        raise acl_core.AclValidationError(errors)
    return out


def _change(view: ApiView, cluster, deletes: list, creates: list, **more) -> Response:
    """Delete then create exact bindings, each with its own result (207 when one failed); held for review
    where the cluster holds ACL changes."""
    user = view.request.user
    held = hold(view, cluster, "acl", lambda: acls_held.prepare_acl_change(user, cluster, deletes, creates))
    if held is not None:
        return held
    change = acls.change_acls(
        actor=user, cluster=cluster, deletes=deletes, creates=creates, source_ip=view.ip
    )
    results = [
        {"action": r.action, "binding": acl_core.to_dict(r.binding), "ok": r.ok, "message": r.message}
        for r in change.results
    ]
    return Response({**more, "ok": change.ok, "results": results}, status=200 if change.ok else 207)


class AclList(ApiView):
    @reads("acls_list", parameters=[s.AclFilterIn, s.AclListQuery])
    def get(self, request, name: str):
        cluster = self.cluster(name, access.MANAGE_ACLS)
        data = form_data(AclFilterForm(request.query_params))
        listing = acls.list_acls(
            actor=request.user,
            cluster=cluster,
            acl_filter=data.get("filter") or acl_core.validate_filter({}),
            group_by=data.get("group_by") or "principal",
            page=data.get("page") or 1,
        )
        return Response(page_json(listing, [acl_core.to_dict(b) for b in listing.rows]))

    @writes("acls_change", (200, 207), request=s.AclChangeIn, held=True)
    def post(self, request, name: str):
        """Create and delete exact bindings in one batch (deletes first), each with its own result."""
        cluster = self.cluster(name, access.MANAGE_ACLS)
        d = self.body(s.AclChangeIn)
        creates, deletes = _bindings(d["creates"]), _bindings(d["deletes"])
        if not creates and not deletes:
            raise ValidationError(["Send at least one binding to create or delete."])
        return _change(self, cluster, deletes, creates)


class AclDelete(ApiView):
    @writes("acls_delete", (200, 207), request=s.AclDeleteIn, held=True)
    def post(self, request, name: str):
        """Delete by filter: ``dry_run`` (the default) lists the matched bindings; otherwise they are deleted."""
        cluster = self.cluster(name, access.MANAGE_ACLS)
        d = self.body(s.AclDeleteIn)
        filters = [acl_core.validate_filter(f, for_delete=True) for f in d["filters"]]
        matched = acls.preview_delete(actor=request.user, cluster=cluster, filters=filters)
        if d["dry_run"]:
            return Response({"dry_run": True, "matched": [acl_core.to_dict(b) for b in matched]})
        return _change(self, cluster, matched, [], dry_run=False)


class AclExport(ApiView):
    @reads(
        "acls_export",
        {(200, "application/yaml"): OpenApiTypes.STR, (200, "text/x-shellscript"): OpenApiTypes.STR},
        parameters=[
            s.AclFilterIn,
            OpenApiParameter(
                "output",
                OpenApiTypes.STR,
                enum=list(acl_core.EXPORT_FORMATS),
                description="yaml: {create: [...]}, what POST acls/ (as JSON) and the batch form take back; "
                "script: kafka-acls.sh --add lines",
            ),
        ],
    )
    def get(self, request, name: str):
        """The bindings the filter matches as a file."""
        cluster = self.cluster(name, access.MANAGE_ACLS)
        data = form_data(AclExportForm(request.query_params))
        filename, text = acls.export_acls(
            actor=request.user, cluster=cluster, filters=[data["filter"]], fmt=data["output"]
        )
        kind = "application/yaml" if data["output"] == "yaml" else "text/x-shellscript"
        response = HttpResponse(text, content_type=f"{kind}; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class AclEffective(ApiView):
    @reads("acls_effective")
    def get(self, request, name: str):
        cluster = self.cluster(name, access.MANAGE_ACLS)
        data = form_data(EffectiveAccessForm(request.query_params))
        result = acls.effective(
            actor=request.user,
            cluster=cluster,
            principal=data["principal"],
            resource_type=data["resource_type"],
            resource_name=data["resource_name"],
            host=data["host"] or "*",
        )
        return Response(plain(result))
