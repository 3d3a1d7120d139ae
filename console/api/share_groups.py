"""API: share groups (KIP-932) - whether the cluster supports them, the list (search, state, paged, with
total lag), a group (members, per-partition start offset, log end, lag), and the changes of
``group.manage``: reset offsets (dry run by default; ``execute`` with ``confirm`` = the group id),
delete a group's offsets of topics, delete the group (held for review where the cluster holds them)."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api.base import ApiView, PageQuery, page_json, query, reads, writes
from console.api.held import hold
from console.share_groups import actions, core, held
from console.share_groups import reads as share_reads
from console.share_groups.reads import ShareInvalid


class ListQuery(PageQuery):
    q = serializers.CharField(
        required=False, default="", max_length=core.MAX_GROUP_ID, help_text="id contains"
    )
    state = serializers.ChoiceField(choices=["", *core.STATES], required=False, default="")


class ShareResetIn(serializers.Serializer):
    group_id = serializers.CharField(max_length=core.MAX_GROUP_ID)
    mode = serializers.ChoiceField(choices=core.MODES)
    topic = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=400,
        help_text="'t' or 't:0,1'; empty: all topics",
    )
    offset = serializers.IntegerField(required=False, min_value=0, default=None)
    datetime = serializers.CharField(required=False, allow_blank=True, default="", max_length=40)
    execute = serializers.BooleanField(required=False, default=False, help_text="false: the dry run")
    confirm = serializers.CharField(required=False, allow_blank=True, default="", max_length=300)
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    break_glass = serializers.CharField(required=False, allow_blank=True, default="")


class ShareDeleteIn(serializers.Serializer):
    group_id = serializers.CharField(max_length=core.MAX_GROUP_ID)
    topics = serializers.ListField(
        child=serializers.CharField(max_length=core.MAX_NAME), required=False, default=None, allow_empty=False
    )
    confirm = serializers.CharField(required=False, allow_blank=True, default="", max_length=300)
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    break_glass = serializers.CharField(required=False, allow_blank=True, default="")


def _params(shape) -> list[OpenApiParameter]:
    return [OpenApiParameter(n, str, required=f.required) for n, f in shape().fields.items()]


class ShareGroupList(ApiView):
    @reads("share_groups_list", parameters=_params(ListQuery))
    def get(self, request, name: str):
        """The share groups (ListGroups types filter "share"), or why the cluster has none."""
        cluster = self.cluster(name, access.VIEW)
        q = query(ListQuery, request)
        listing = share_reads.list_page(
            actor=request.user, cluster=cluster, query=q["q"], state=q["state"], page=q["page"],
            per_page=q.get("per_page") or settings.API_PAGE_SIZE,
        )  # fmt: skip
        return Response(
            page_json(listing, [r.as_json() for r in listing.rows], support=listing.support.as_json(),
                      lag_error=listing.lag_error or None)
        )  # fmt: skip


class ShareGroupDetail(ApiView):
    @reads("share_group")
    def get(self, request, name: str, group_id: str):
        """A share group's members and per-partition start offset, log end and lag (404: no such group)."""
        cluster = self.cluster(name, access.VIEW)
        found = share_reads.detail(actor=request.user, cluster=cluster, group_id=group_id)
        if found is None:
            raise Http404("No such share group.")
        return Response(found.as_json())


class ShareGroupReset(ApiView):
    @writes("share_group_reset", (200, 207), request=ShareResetIn, held=True)
    def post(self, request, name: str):
        """The reset's dry run (default), or with ``execute`` and ``confirm`` the reset itself. 422: refused
        as asked (members present, bad input; nothing sent); 207: not every partition was applied."""
        cluster = self.cluster(name, access.MANAGE_GROUPS)
        d = self.body(ShareResetIn)
        user = request.user
        try:
            spec = core.make_spec(d["mode"], d["topic"], offset=d["offset"], datetime_text=d["datetime"])
        except core.ShareInputError as exc:
            raise ShareInvalid(exc.errors) from None
        if not d["execute"]:
            rows = actions.preview_reset(actor=user, cluster=cluster, group_id=d["group_id"], spec=spec)
            return Response(
                {"dry_run": True, "group_id": d["group_id"], "partitions": [r.as_json() for r in rows]}
            )
        answer = hold(
            self,
            cluster,
            held.GATE_RESET,
            lambda: held.prepare_reset(user, cluster, d["group_id"], spec, d["confirm"]),
        )
        if answer is not None:
            return answer
        result = actions.reset_offsets(
            actor=user,
            cluster=cluster,
            group_id=d["group_id"],
            spec=spec,
            confirmation=d["confirm"],
            source_ip=self.ip,
        )
        return Response(result.as_json(), status=200 if result.ok else 207)


class ShareGroupDelete(ApiView):
    @writes("share_group_delete", (200, 207), request=ShareDeleteIn, held=True)
    def post(self, request, name: str):
        """Delete the group, or with ``topics`` its offsets of those topics (``confirm``: the group id)."""
        cluster = self.cluster(name, access.MANAGE_GROUPS)
        d = self.body(ShareDeleteIn)
        user, topics = request.user, d["topics"]
        answer = hold(
            self, cluster, held.GATE_DELETE,
            lambda: held.prepare_delete(user, cluster, d["group_id"], d["confirm"], topics),
        )  # fmt: skip
        if answer is not None:
            return answer
        if topics:
            result = actions.delete_offsets(
                actor=user, cluster=cluster, group_id=d["group_id"], topics=topics, confirmation=d["confirm"],
                source_ip=self.ip,
            )  # fmt: skip
        else:
            result = actions.delete_group(
                actor=user,
                cluster=cluster,
                group_id=d["group_id"],
                confirmation=d["confirm"],
                source_ip=self.ip,
            )
        return Response(result.as_json(), status=200 if result.ok else 207)
