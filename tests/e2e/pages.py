"""The console's pages as a browser test drives them: the steps several e2e tests (and the real-Kafka run,
real_secured_flow.py) take on the same forms - following the cluster nav, the new-topic form, the first row
of a config edit, the single-binding ACL form and its apply. Each step fills and submits; what the page then
shows stays for the test to assert."""

from __future__ import annotations


def open_from_nav(page, cluster_url: str, link: str, path: str) -> None:
    """From the cluster's overview, follow the main nav's ``link`` to ``{cluster_url}/{path}/``."""
    page.goto(f"{cluster_url}/")
    page.click(f"nav.main-nav >> text={link}")
    page.wait_for_url(f"{cluster_url}/{path}/")


def fill_new_topic(page, name: str, partitions: int, replication_factor: int) -> None:
    """The new-topic form's name, partition count and replication factor."""
    page.fill("#id_name", name)
    page.fill("#id_partitions", str(partitions))
    page.fill("#id_replication_factor", str(replication_factor))


def create_topic(
    page, cluster_url: str, name: str, partitions: int, replication_factor: int, timeout: float | None = None
) -> None:
    """From the topic list: Create topic, the form, Create; wait for the new topic's page."""
    page.click("text=Create topic")
    fill_new_topic(page, name, partitions, replication_factor)
    page.click("button[value=create]")
    page.wait_for_url(f"{cluster_url}/topics/{name}/", timeout=timeout)


def preview_config_change(page, key: str, value: str) -> None:
    """On a config edit page: SET ``key`` to ``value`` in the first row and ask for the preview."""
    page.select_option("#id_op_0", "SET")
    page.fill("#id_key_0", key)
    page.fill("#id_value_0", value)
    page.click("button[value=preview]")


def review_acl_binding(page, resource_name: str, principal: str, operation: str, **choices: str) -> None:
    """The single-binding ACL form for a TOPIC binding (``choices``: more of its selects, e.g.
    pattern_type="LITERAL"), submitted; wait for the review of what would be created."""
    form = "#acl-single"
    page.select_option(f"{form} #id_resource_type", "TOPIC")
    for field, choice in choices.items():
        page.select_option(f"{form} #id_{field}", choice)
    page.fill(f"{form} #id_resource_name", resource_name)
    page.fill(f"{form} #id_principal", principal)
    page.select_option(f"{form} #id_operation", operation)
    page.click(f"{form} button[type=submit]")
    page.locator("#acl-creates").wait_for()


def apply_acls(page, timeout: float | None = None) -> str:
    """Apply the reviewed ACL creates or deletes; the results' text."""
    page.click("#acl-apply")
    page.locator("#acl-results").wait_for(timeout=timeout)
    return page.inner_text("#acl-results")


# -- held changes ------------------------------------------------------------------------------------


def review_row(tab, table: str = "#change-review") -> list[str]:
    """The cells of the first row of a held change's review table."""
    return [c.strip() for c in tab.locator(f"{table} tbody tr").first.locator("td").all_inner_texts()]


def approve(tab, comment: str = "") -> None:
    """On a held change's page: approve (with ``comment``) and wait until it has run."""
    if comment:
        tab.fill("#request-decision textarea", comment)
    tab.click("#approve")
    tab.locator(".messages", has_text="approved").wait_for()
    tab.locator("#request-status, .status", has_text="Done").first.wait_for(timeout=30000)


def approve_in_browser(browser, live_server, base: str, req_id: int, check) -> None:
    """operator2 opens the held change, checks what it shows (``check(tab)``) and approves; the
    worker runs the approved change (only the change's own operation: nothing else moves)."""
    from console.changes.queue import EXECUTE_KIND
    from tests.e2e.conftest import operations_worker, signed_in_tab

    with signed_in_tab(browser, live_server, "operator2", "pw-operator2") as tab:
        tab.goto(f"{base}/requests/{req_id}/")
        check(tab)
        with operations_worker(kind=EXECUTE_KIND):
            approve(tab)
