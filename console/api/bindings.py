"""API: who may do what on a cluster (role bindings: list, grant, revoke), for cluster admins."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.http import Http404
from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api.base import ApiView, form_data, paged, reads, writes
from console.clusters import bindings
from console.forms.bindings import GrantRoleForm
from console.models import RoleBinding


def binding_json(b: RoleBinding) -> dict:
    return {
        "id": b.pk,
        "user": b.user.username if b.user_id else None,
        "group": b.group.name if b.group_id else None,
        "role": b.role,
        "namespaces": b.namespaces or [],
        "principals": b.principals or [],
    }


class Bindings(ApiView):
    @reads("access_list")
    def get(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        rows = list(
            cluster.bindings.select_related("user", "group").order_by("role", "user__username", "group__name")
        )
        return Response(paged(rows, request, binding_json))

    @writes("access_grant", 201, request=s.GrantIn)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        d = self.body(s.GrantIn)
        user = get_user_model().objects.filter(username=d.get("user")).first() if d.get("user") else None
        group = Group.objects.filter(name=d.get("group")).first() if d.get("group") else None
        if (d.get("user") and user is None) or (d.get("group") and group is None):
            raise ValidationError(["No such user or group."])
        fields = {
            "user": user.pk if user else "",
            "group": group.pk if group else "",
            "role": d["role"],
            "namespaces": "\n".join(d["namespaces"]),
            "principals": "\n".join(d["principals"]),
        }
        cleaned = form_data(GrantRoleForm(fields))
        binding = bindings.grant_role(actor=request.user, cluster=cluster, source_ip=self.ip, **cleaned)
        return Response(binding_json(binding), status=201)


class BindingRevoke(ApiView):
    @writes("access_revoke", request=None)
    def post(self, request, name: str, binding_id: int):
        cluster = self.cluster(name, access.ADMINISTER)
        binding = RoleBinding.objects.filter(pk=binding_id, cluster=cluster).first()
        if binding is None:
            raise Http404("No such role binding.")
        described = binding_json(binding)
        bindings.revoke_role(actor=request.user, binding=binding, source_ip=self.ip)
        return Response({"revoked": described})
