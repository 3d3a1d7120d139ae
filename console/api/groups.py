"""API: consumer groups (list, show, reset offsets with its dry run, delete a group or its offsets of a
topic) and a topic's consumers."""

from __future__ import annotations

from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api.base import ApiView, form_data, page_json, paged, plain, reads, writes
from console.api.held import hold
from console.changes import gate
from console.forms.groups import GroupListForm, ResetForm
from console.groups import actions as group_actions
from console.groups import delete as group_delete
from console.groups import held as groups_held
from console.groups import reads as group_reads

NEEDS = "groups"  # the capability every group call needs (a controller-only connection lacks it)


class GroupList(ApiView):
    @reads("groups_list", parameters=[s.GroupListQuery])
    def get(self, request, name: str):
        cluster = self.cluster(name, needs=NEEDS)
        page = group_reads.list_groups(
            actor=request.user, cluster=cluster, **GroupListForm(request.query_params).query()
        )
        more = {
            "cluster_groups": page.cluster_groups,
            "query_error": page.query_error,
            "lag_error": plain(page.lag_error),
        }
        return Response(page_json(page, [plain(r) for r in page.items], **more))


class GroupDetail(ApiView):
    @reads("groups_retrieve")
    def get(self, request, name: str, group: str):
        cluster = self.cluster(name, needs=NEEDS)
        return Response(plain(group_reads.group_detail(actor=request.user, cluster=cluster, group_id=group)))


class GroupReset(ApiView):
    @writes("groups_reset_offsets", (200, 207), request=s.ResetIn, held=True)
    def post(self, request, name: str, group: str):
        """``dry_run`` (the default): the plan, nothing changes. Otherwise execute, with the group id as confirmation."""
        cluster = self.cluster(name, access.MANAGE_GROUPS, needs=NEEDS)
        d = self.body(s.ResetIn)
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
            group_actions.check_confirmation(group, d["confirmation"])  # as the page, before submitting
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
    @writes("groups_delete", request=s.ConfirmIn, held=True)
    def post(self, request, name: str, group: str):
        cluster = self.cluster(name, access.MANAGE_GROUPS, needs=NEEDS)
        confirmation = self.body(s.ConfirmIn)["confirmation"]
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
    @writes("groups_offsets_delete", (200, 207), request=s.OffsetsDeleteIn, held=True)
    def post(self, request, name: str, group: str):
        cluster = self.cluster(name, access.MANAGE_GROUPS, needs=NEEDS)
        d = self.body(s.OffsetsDeleteIn)
        topic, confirmation = d["topic"], d["confirmation"]
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


class TopicConsumers(ApiView):
    @reads("topics_consumers")
    def get(self, request, name: str, topic: str):
        cluster = self.cluster(name, needs=NEEDS)
        rows = group_reads.topic_consumers(actor=request.user, cluster=cluster, topic=topic)
        return Response(paged(rows, request))
