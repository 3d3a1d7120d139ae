"""API: SCRAM users (KIP-554) - list users with their mechanisms and iterations, set (create or rotate)
a credential, delete one; admin only, held for review where the cluster holds ``scram.alter``. The
password is write-only: no answer carries it."""

from __future__ import annotations

from django.conf import settings
from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api.base import ApiView, PageQuery, page_json, query, reads, writes
from console.api.held import hold
from console.scram import actions, core, held
from console.scram import reads as scram_reads


class Text(serializers.CharField):
    """A JSON string and nothing else: DRF's CharField turns a number into text, so ``12`` or
    ``1e308`` would become a user name (or a password) nobody typed."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class ScramSetIn(serializers.Serializer):
    user = Text(max_length=core.NAME_MAX, trim_whitespace=False)
    mechanism = serializers.ChoiceField(choices=list(core.MECHANISMS))
    iterations = serializers.IntegerField(
        required=False,
        default=core.DEFAULT_ITERATIONS,
        min_value=core.MIN_ITERATIONS,
        max_value=core.MAX_ITERATIONS,
    )
    password = Text(
        write_only=True, trim_whitespace=False, max_length=core.PASSWORD_MAX, style={"input_type": "password"}
    )
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    break_glass = serializers.CharField(required=False, allow_blank=True, default="")


class ScramDeleteIn(serializers.Serializer):
    user = Text(max_length=core.NAME_MAX, trim_whitespace=False)
    mechanism = serializers.ChoiceField(choices=list(core.MECHANISMS))
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    break_glass = serializers.CharField(required=False, allow_blank=True, default="")


class ScramUsers(ApiView):
    @reads("scram_users_list")
    def get(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        q = query(PageQuery, request)
        listing = scram_reads.list_page(
            actor=request.user,
            cluster=cluster,
            page=q["page"],
            per_page=q.get("per_page") or settings.API_PAGE_SIZE,
        )
        return Response(page_json(listing, [scram_reads.as_json(u) for u in listing.users]))

    @writes("scram_users_set", (200, 207), request=ScramSetIn, held=True)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        d = self.body(ScramSetIn)
        user = request.user
        answer = hold(
            self,
            cluster,
            held.GATE,
            lambda: held.prepare_set(
                user, cluster, d["user"], d["mechanism"], d["iterations"], d["password"]
            ),
        )
        if answer is not None:
            return answer
        result = actions.set_credential(
            actor=user,
            cluster=cluster,
            user=d["user"],
            mechanism=d["mechanism"],
            iterations=d["iterations"],
            password=d["password"],
            source_ip=self.ip,
        )
        return Response(result.as_json(), status=200 if result.ok else 207)


class ScramUserDelete(ApiView):
    @writes("scram_users_delete", (200, 207), request=ScramDeleteIn, held=True)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        d = self.body(ScramDeleteIn)
        user = request.user
        answer = hold(
            self, cluster, held.GATE, lambda: held.prepare_delete(user, cluster, d["user"], d["mechanism"])
        )
        if answer is not None:
            return answer
        result = actions.delete_credential(
            actor=user, cluster=cluster, user=d["user"], mechanism=d["mechanism"], source_ip=self.ip
        )
        return Response(result.as_json(), status=200 if result.ok else 207)
