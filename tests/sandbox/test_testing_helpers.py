"""The pytest helpers others use: the fixture factory, and a state file that cannot be read."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient

from sandbox.testing import running_sandbox, sandbox_fixture

pytestmark = []

tiny = sandbox_fixture(scope="module", brokers=1, controllers=0, speed=0)


def test_it_provides_a_running_cluster_as_a_fixture(tiny):
    admin = AdminClient({"bootstrap.servers": tiny.bootstrap_servers})
    assert sorted(admin.list_topics(timeout=10).brokers) == [1]
    assert tiny.bootstrap_controllers == ""


def test_it_starts_fresh_when_the_state_file_is_unreadable(tmp_path):
    bad = tmp_path / "state.json"
    bad.write_text("{not json")
    with running_sandbox(brokers=1, controllers=0, speed=0, state_file=str(bad)) as c:
        assert c.state.topics == {}
        c.create_topic("kept", 1, 1)
    assert (tmp_path / "state.json.bad").read_text() == "{not json"
    with running_sandbox(brokers=1, controllers=0, speed=0, state_file=str(bad)) as c:
        assert list(c.state.topics) == ["kept"]
