"""Human values: console/formatting.py and its template filters (console/templatetags/console_format.py)."""

from __future__ import annotations

import pytest
from django.template import Context, Template
from hypothesis import given
from hypothesis import strategies as st

from console import formatting

LONG_MAX = 9223372036854775807


def render(text: str, **context) -> str:
    return Template("{% load console_format %}" + text).render(Context(context))


def test_it_groups_counts_and_names_long_max_unlimited():
    assert [formatting.human_count(n) for n in (0, 999, 1234, 1234567, LONG_MAX, None)] == [
        "0",
        "999",
        "1,234",
        "1,234,567",
        "unlimited",
        "–",
    ]


def test_it_reads_milliseconds_as_a_duration():
    assert [formatting.human_millis(n) for n in (0, 500, 1500, 604800000, 5400000, LONG_MAX, None)] == [
        "0 ms",
        "500 ms",
        "1 s 500 ms",
        "7 d",
        "1 h 30 min",
        "infinite",
        "–",
    ]


def test_it_reads_a_config_count_of_no_unit_grouped():
    assert [
        formatting.human_config_value(key, value)
        for key, value in (
            ("flush.messages", str(LONG_MAX)),
            ("group.consumer.max.size", "2147483647"),
            ("min.insync.replicas", "2"),
            ("num.partitions", "9999"),
            ("cleanup.policy", "delete"),
        )
    ] == ["unlimited", "2,147,483,647", None, None, None]


def test_it_writes_a_config_value_in_a_sentence_exactly():
    assert [
        formatting.config_text(key, value)
        for key, value in (
            ("retention.ms", "604800000"),
            ("max.message.bytes", "1048588"),
            ("retention.bytes", -1),
            ("cleanup.policy", "compact"),
            ("min.insync.replicas", "2"),
        )
    ] == ["7 d", "1,048,588 (≈ 1 MiB)", "unlimited", "compact", "2"]


def test_it_writes_seconds_as_every_other_duration():
    assert [formatting.human_duration(s) for s in (None, 0, 0.25, 4, 75, 3600, 3605, 90061)] == [
        "unknown",
        "0 s",
        "250 ms",
        "4 s",
        "1 min 15 s",
        "1 h",
        "≈ 1 h",
        "≈ 1 d 1 h",
    ]


def test_it_levels_lag_by_the_alert_rules_threshold():
    assert [formatting.lag_level(n, 10000) for n in (None, 0, 54, 10000, 10001, 5_000_000)] == [
        "none",
        "none",
        "ok",
        "ok",
        "over",
        "over",
    ]


@pytest.mark.parametrize(
    ("template", "value", "shown"),
    [
        ("{{ v|size }}", 1073741824, '<span class="hv" title="1073741824 bytes">1.0 GiB</span>'),
        ("{{ v|size }}", 512, '<span class="hv" title="512 bytes">512 B</span>'),
        ("{{ v|size }}", None, "–"),
        ("{{ v|rate }}", 10485760, '<span class="hv" title="10485760 bytes/s">10.0 MiB/s</span>'),
        ("{{ v|millis }}", "604800000", '<span class="hv" title="604800000 ms">7 d</span>'),
        ("{{ v|millis }}", LONG_MAX, f'<span class="hv" title="{LONG_MAX} ms">infinite</span>'),
        ("{{ v|seconds }}", 75, '<span class="hv" title="75 s">1 min 15 s</span>'),
        ("{{ v|count }}", 510696, '<span class="hv" title="510696">510,696</span>'),
        ("{{ v|count }}", 54, "54"),
        ("{{ v|count }}", LONG_MAX, f'<span class="hv" title="{LONG_MAX}">unlimited</span>'),
        ("{{ v|count }}", "n/a", "n/a"),
        ("{{ v|count }}", "<b>", "&lt;b&gt;"),
        ('{{ v|config:"retention.ms" }}', "604800000", '<span class="hv" title="604800000">7 d</span>'),
        ('{{ v|config:"retention.ms" }}', "-1", '<span class="hv" title="-1">infinite</span>'),
        ('{{ v|config:"segment.bytes" }}', "1073741824", '<span class="hv" title="1073741824">1 GiB</span>'),
        (
            '{{ v|config:"flush.messages" }}',
            str(LONG_MAX),
            f'<span class="hv" title="{LONG_MAX}">unlimited</span>',
        ),
        ('{{ v|config:"cleanup.policy" }}', "delete", "delete"),
        ('{{ v|config:"min.insync.replicas" }}', "2", "2"),
        (
            '{{ v|with_meaning:"max.message.bytes" }}',
            '"1048588"',
            '<span class="raw">&quot;1048588&quot;</span> <span class="muted">(≈ 1 MiB)</span>',
        ),
        (
            '{{ v|with_meaning:"retention.ms" }}',
            "604800000",
            '<span class="raw">604800000</span> <span class="muted">(7 d)</span>',
        ),
        ('{{ v|with_meaning:"cleanup.policy" }}', '"compact"', "&quot;compact&quot;"),
        ('{{ v|with_meaning:"name" }}', '{"a": 1}', "{&quot;a&quot;: 1}"),
        ('{{ v|with_meaning:"retention.ms" }}', None, "—"),
        (
            "{{ v|epoch_ms }}",
            1795811717288,
            '<span class="hv" title="1795811717288 ms since the epoch">2026-11-27 20:35:17 UTC</span>',
        ),
        ("{{ v|epoch_ms }}", -1, '<span class="hv" title="-1 ms since the epoch">–</span>'),
        ("{{ v|epoch_ms }}", None, "–"),
        ("{{ v|lag_level:10000 }}", 54, "ok"),
        ("{{ v|lag_level:10000 }}", 5000000, "over"),
        ("{{ v|lag_level:10000 }}", 0, "none"),
    ],
)
def test_it_shows_the_human_value_with_the_raw_one_on_hover(template, value, shown):
    assert render(template, v=value) == shown


def test_it_names_a_size_that_rounds_up_to_the_next_unit_by_that_unit():
    tib = 1024**4
    assert [formatting.human_bytes(n) for n in (1023, 1024, 1023.97 * 1024, tib - 1, 1.5 * tib, -2048)] == [
        "1023 B",
        "1.0 KiB",
        "1.0 MiB",
        "1.0 TiB",
        "1.5 TiB",
        "-2.0 KiB",
    ]


def test_it_writes_a_size_beyond_any_float_as_typed():
    assert formatting.human_bytes(10**400).endswith(",000 B")
    assert formatting.human_bytes(2**63 - 1) == "8.0 EiB"


@given(
    st.integers(min_value=0, max_value=2**53 - 1)
    | st.sampled_from([1024**k + d for k in range(1, 6) for d in (-52, -1, 0, 1)])
)
def test_a_whole_number_of_bytes_reads_as_the_same_size_written_as_a_float(n):
    """The integer fast path (the poll writes 10,000 sizes a cycle) says what the general one does."""
    assert formatting.human_bytes(n) == formatting.human_bytes(float(n))
