"""API: ACLs (list, change, delete by filter with its preview, effective access) and consumer groups."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from console import access
from console.acls import actions as acls
from console.acls import core as acl_core
from console.acls import held as acls_held
from console.api import serializers as s
from console.api.base import ApiView, plain
from console.api.held import hold
from console.api.idempotency import idempotent
from console.changes import gate
from console.clusters import capabilities
from console.forms.acls import AclFilterForm, EffectiveAccessForm
from console.forms.groups import GroupListForm, ResetForm
from console.groups import actions as group_actions
from console.groups import delete as group_delete
from console.groups import held as groups_held
from console.groups import reads as group_reads

ERRORS = {400: s.ErrorBody, 403: s.ErrorBody, 404: s.ErrorBody, 422: s.ErrorBody}


def form_data(form) -> dict:
    """The page's own form validates the API's input too: same rules, same messages."""
    if not form.is_valid():
        raise ValidationError(
            [f"{k}: {' '.join(v)}" if k != "__all__" else " ".join(v) for k, v in form.errors.items()]
        )
    return form.cleaned_data


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


def change_json(change) -> dict:
    return {
        "ok": change.ok,
        "results": [
            {"action": r.action, "binding": acl_core.to_dict(r.binding), "ok": r.ok, "message": r.message}
            for r in change.results
        ],
    }


class AclList(ApiView):
    @extend_schema(
        operation_id="acls_list",
        parameters=[s.AclFilterIn, s.AclListQuery],
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
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
        return Response(
            {
                "count": listing.total,
                "page": listing.page,
                "pages": listing.pages,
                "results": [acl_core.to_dict(b) for b in listing.rows],
            }
        )

    @extend_schema(
        operation_id="acls_change", request=s.AclChangeIn, responses={200: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str):
        """Create and delete exact bindings in one batch (deletes first), each with its own result."""
        cluster = self.cluster(name, access.MANAGE_ACLS)
        data = s.AclChangeIn(data=request.data)
        data.is_valid(raise_exception=True)
        creates, deletes = (
            _bindings(data.validated_data["creates"]),
            _bindings(data.validated_data["deletes"]),
        )
        if not creates and not deletes:
            raise ValidationError(["Send at least one binding to create or delete."])
        held = hold(
            self,
            cluster,
            "acl",
            lambda: acls_held.prepare_acl_change(request.user, cluster, deletes, creates),
        )
        if held is not None:
            return held
        change = acls.change_acls(
            actor=request.user, cluster=cluster, deletes=deletes, creates=creates, source_ip=self.ip
        )
        return Response(change_json(change), status=200 if change.ok else 207)


class AclDelete(ApiView):
    @extend_schema(
        operation_id="acls_delete", request=s.AclDeleteIn, responses={200: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str):
        """Delete by filter: ``dry_run`` (the default) lists the matched bindings; otherwise they are deleted."""
        cluster = self.cluster(name, access.MANAGE_ACLS)
        data = s.AclDeleteIn(data=request.data)
        data.is_valid(raise_exception=True)
        filters = [acl_core.validate_filter(f, for_delete=True) for f in data.validated_data["filters"]]
        matched = acls.preview_delete(actor=request.user, cluster=cluster, filters=filters)
        if data.validated_data["dry_run"]:
            return Response({"dry_run": True, "matched": [acl_core.to_dict(b) for b in matched]})
        held = hold(
            self, cluster, "acl", lambda: acls_held.prepare_acl_change(request.user, cluster, matched, [])
        )
        if held is not None:
            return held
        change = acls.change_acls(
            actor=request.user, cluster=cluster, deletes=matched, creates=[], source_ip=self.ip
        )
        return Response({"dry_run": False, **change_json(change)}, status=200 if change.ok else 207)


class AclEffective(ApiView):
    @extend_schema(operation_id="acls_effective", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        cluster = self.cluster(name, access.MANAGE_ACLS)
        data = form_data(EffectiveAccessForm(request.query_params))
        result = acls.effective_access(
            actor=request.user,
            cluster=cluster,
            principal=data["principal"],
            resource_type=data["resource_type"],
            resource_name=data["resource_name"],
            host=data["host"] or "*",
        )
        return Response(plain(result))


# -- consumer groups -------------------------------------------------------------------------------


def _groups_cluster(view: ApiView, name: str, perm: str = access.VIEW):
    cluster = view.cluster(name, perm)
    reason = capabilities.unavailable_reason(cluster, "groups")
    if reason:
        raise ValidationError([reason])
    return cluster


class GroupList(ApiView):
    @extend_schema(
        operation_id="groups_list",
        parameters=[s.GroupListQuery],
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def get(self, request, name: str):
        cluster = _groups_cluster(self, name)
        page = group_reads.list_groups(
            actor=request.user, cluster=cluster, **GroupListForm(request.query_params).query()
        )
        return Response(
            {
                "count": page.total,
                "page": page.page,
                "pages": page.pages,
                "per_page": page.per_page,
                "cluster_groups": page.cluster_groups,
                "query_error": page.query_error,
                "lag_error": plain(page.lag_error),
                "results": [plain(r) for r in page.items],
            }
        )


class GroupDetail(ApiView):
    @extend_schema(operation_id="groups_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str, group: str):
        cluster = _groups_cluster(self, name)
        return Response(plain(group_reads.group_detail(actor=request.user, cluster=cluster, group_id=group)))


class GroupReset(ApiView):
    @extend_schema(
        operation_id="groups_reset_offsets", request=s.ResetIn, responses={200: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str, group: str):
        """``dry_run`` (the default): the plan, nothing changes. Otherwise execute, with the group id as confirmation."""
        cluster = _groups_cluster(self, name, access.MANAGE_GROUPS)
        data = s.ResetIn(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        fields = {
            k: ("" if v is None else str(v)) for k, v in d.items() if k not in ("dry_run", "confirmation")
        }
        spec = form_data(ResetForm(fields, group_id=group))["spec"]
        if d["dry_run"]:
            preview = group_actions.preview_reset(
                actor=request.user, cluster=cluster, group_id=group, spec=spec
            )
            return Response({"dry_run": True, **plain(preview)})
        if gate.required(request.user, cluster, "group.reset") is not None:
            if d["confirmation"].strip() != group:
                raise group_actions.ConfirmationError("Type the group id to confirm; nothing was submitted.")
            return hold(
                self,
                cluster,
                "group.reset",
                lambda: groups_held.prepare_group_reset(request.user, cluster, group, spec),
            )
        result = group_actions.reset_offsets(
            actor=request.user,
            cluster=cluster,
            group_id=group,
            spec=spec,
            confirmation=d["confirmation"],
            source_ip=self.ip,
        )
        return Response(
            {"dry_run": False, **plain(result), "ok": result.all_ok}, status=200 if result.all_ok else 207
        )


class GroupDelete(ApiView):
    @extend_schema(
        operation_id="groups_delete",
        request=s.ConfirmIn,
        responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT, **ERRORS},
    )
    @idempotent
    def post(self, request, name: str, group: str):
        cluster = _groups_cluster(self, name, access.MANAGE_GROUPS)
        data = s.ConfirmIn(data=request.data)
        data.is_valid(raise_exception=True)
        confirmation = data.validated_data["confirmation"]
        held = hold(
            self,
            cluster,
            group_delete.GATE,
            lambda: groups_held.prepare_group_delete(request.user, cluster, group, confirmation=confirmation),
        )
        if held is not None:
            return held
        done = group_delete.delete_group(
            actor=request.user, cluster=cluster, group_id=group, confirmation=confirmation, source_ip=self.ip
        )
        return Response(plain(done), status=200 if done.ok else 409)


class GroupOffsetsDelete(ApiView):
    @extend_schema(
        operation_id="groups_offsets_delete",
        request=s.OffsetsDeleteIn,
        responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT, **ERRORS},
    )
    @idempotent
    def post(self, request, name: str, group: str):
        cluster = _groups_cluster(self, name, access.MANAGE_GROUPS)
        data = s.OffsetsDeleteIn(data=request.data)
        data.is_valid(raise_exception=True)
        topic, confirmation = data.validated_data["topic"], data.validated_data["confirmation"]
        held = hold(
            self,
            cluster,
            group_delete.GATE,
            lambda: groups_held.prepare_group_offsets_delete(
                request.user, cluster, group, topic, confirmation=confirmation
            ),
        )
        if held is not None:
            return held
        result = group_delete.delete_offsets(
            actor=request.user,
            cluster=cluster,
            group_id=group,
            topic=topic,
            confirmation=confirmation,
            source_ip=self.ip,
        )
        return Response({**plain(result), "ok": result.all_ok}, status=200 if result.all_ok else 207)
