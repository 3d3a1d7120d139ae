"""The estate page: export as a download, plan a pasted or uploaded file (the rows, or "no drift"),
submit the plan for approval (operators; the held change's page next); a bad file is shown on the
form with its lines; the nav links to the page."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from console.models.requests import ChangeRequest, RequestState
from tests.unit.estate_world import drop_namespaces, make_namespace  # noqa: F401 - the fixture

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


def url(route: str) -> str:
    return reverse(route, kwargs={"name": "sandbox"})


def rows(html: str) -> list[list[str]]:
    body = html.split('id="estate-rows"', 1)[1].split("</table>", 1)[0].split("<tbody>", 1)[1]
    return [re.findall(r"<td>(.*?)</td>", tr) for tr in body.split("</tr>") if "<td>" in tr]


def test_it_exports_plans_and_submits_from_the_page(client, personas, kafka_cluster):
    ns = make_namespace(personas, kafka_cluster, 2)
    client.force_login(personas["viewer"])
    page = client.get(url("estate"))
    assert page.status_code == 200 and 'id="estate-export"' in page.content.decode()
    assert f'href="{url("estate")}">Estate</a>' in page.content.decode()
    got = client.get(url("estate_export"), {"namespace": ns})
    assert got["Content-Type"] == "application/yaml; charset=utf-8"
    assert got["Content-Disposition"] == f'attachment; filename="sandbox-{ns[:-1]}.estate.yaml"'
    text = got.content.decode()
    assert text.startswith(f"kind: KafkaEstate\nversion: 1\ncluster: sandbox\nnamespace: {ns}\n")

    same = client.post(url("estate_plan"), {"text": text})
    assert same.status_code == 200 and 'id="estate-no-drift"' in same.content.decode()
    grown = text.replace("partitions: 1", "partitions: 2", 1)
    upload = SimpleUploadedFile("estate.yaml", grown.encode(), content_type="application/yaml")
    planned = client.post(url("estate_plan"), {"upload": upload}).content.decode()
    assert rows(planned) == [[f"topic:{ns}t000", "alter", "1 partitions", "2 partitions", "valid"]]
    assert 'id="estate-submit"' not in planned  # a viewer may plan, not apply

    client.force_login(personas["operator"])
    planned = client.post(url("estate_plan"), {"text": grown}).content.decode()
    assert 'id="estate-submit"' in planned
    held = client.post(url("estate_submit"), {"text": grown, "reason": "grow t000"})
    req = ChangeRequest.objects.get()
    assert held.status_code == 302
    assert held["Location"] == reverse("request_detail", kwargs={"name": "sandbox", "request_id": req.pk})
    assert (req.kind, req.state, req.reason, req.requested_by_name) == (
        "estate.apply",
        RequestState.PENDING,
        "grow t000",
        "operator",
    )
    shown = client.get(held["Location"]).content.decode()
    assert "Estate plan (always held for approval)" in shown
    assert f"topic:{ns}t000" in shown and "2 partitions" in shown


def test_it_shows_a_bad_file_on_the_form(client, personas, kafka_cluster):
    client.force_login(personas["viewer"])
    bad = client.post(url("estate_plan"), {"text": "kind: KafkaEstate\nversion: 1\ntopics: 5\n"})
    html = bad.content.decode()
    assert bad.status_code == 200
    assert "<p>line 3: topics must be a list</p>" in html and 'id="estate-result"' not in html
    empty = client.post(url("estate_plan"), {"text": "  "}).content.decode()
    assert "<p>Paste the estate YAML or upload the file.</p>" in empty
    client.force_login(personas["operator"])
    nothing = client.post(
        url("estate_submit"),
        {"text": "kind: KafkaEstate\nversion: 1\nnamespace: nobody-here.\n", "reason": "x"},
    )
    assert nothing.status_code == 200
    assert "no drift: the cluster already matches the file" in nothing.content.decode()
    assert not ChangeRequest.objects.exists()
