"""Tests for extender.kube.taints, with upstream's toleration_test.go table ported as data."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extender.kube.taints import (
    TAINT_EFFECTS,
    Taint,
    TaintError,
    Toleration,
    find_untolerated_taint,
    parse_taints,
    parse_tolerations,
    tolerates,
    tolerations_tolerate_taint,
)

NS = "NoSchedule"
NE = "NoExecute"
PNS = "PreferNoSchedule"
FILTER_EFFECTS = frozenset({NS, NE})

# TestTolerationToleratesTaint: (description, toleration, taint, tolerated).  The Lt/Gt rows
# need the TaintTolerationComparisonOperators gate, which the upstream table assumes on.
UPSTREAM_TOLERATES: list[tuple[str, Toleration, Taint, bool]] = [
    (
        "same key and effect, Exists, taint has no value",
        Toleration(key="foo", operator="Exists", effect=NS),
        Taint("foo", "", NS),
        True,
    ),
    (
        "same key and effect, Exists, taint has some value",
        Toleration(key="foo", operator="Exists", effect=NS),
        Taint("foo", "bar", NS),
        True,
    ),
    (
        "same effect, empty key and Exists match all taints",
        Toleration(key="", operator="Exists", effect=NS),
        Taint("foo", "bar", NS),
        True,
    ),
    (
        "same key, effect and value, Equal",
        Toleration(key="foo", operator="Equal", value="bar", effect=NS),
        Taint("foo", "bar", NS),
        True,
    ),
    (
        "same key and effect but different values, Equal",
        Toleration(key="foo", operator="Equal", value="value1", effect=NS),
        Taint("foo", "value2", NS),
        False,
    ),
    (
        "same key and value but different effects, Equal",
        Toleration(key="foo", operator="Equal", value="bar", effect=NS),
        Taint("foo", "bar", NE),
        False,
    ),
    (
        "Gt - taint value less than toleration value",
        Toleration(key="node.kubernetes.io/sla", operator="Gt", value="950", effect=NS),
        Taint("node.kubernetes.io/sla", "800", NS),
        False,
    ),
    (
        "Gt - taint value greater than toleration value",
        Toleration(key="node.kubernetes.io/sla", operator="Gt", value="750", effect=NS),
        Taint("node.kubernetes.io/sla", "950", NS),
        True,
    ),
    (
        "Lt - taint value greater than toleration value",
        Toleration(key="node.kubernetes.io/sla", operator="Lt", value="800", effect=NS),
        Taint("node.kubernetes.io/sla", "950", NS),
        False,
    ),
    (
        "Lt - taint value less than toleration value",
        Toleration(key="node.kubernetes.io/sla", operator="Lt", value="950", effect=NS),
        Taint("node.kubernetes.io/sla", "800", NS),
        True,
    ),
    (
        "Gt and taint with equal numeric value",
        Toleration(key="node.kubernetes.io/sla", operator="Gt", value="950", effect=NS),
        Taint("node.kubernetes.io/sla", "950", NS),
        False,
    ),
    (
        "Gt and taint with non-numeric value",
        Toleration(key="node.kubernetes.io/sla", operator="Gt", value="950", effect=NS),
        Taint("node.kubernetes.io/sla", "high", NS),
        False,
    ),
    (
        "Gt and negative numeric values - taint value less than threshold",
        Toleration(key="test-key", operator="Gt", value="-100", effect=NS),
        Taint("test-key", "-200", NS),
        False,
    ),
    (
        "Gt and large int64 values - taint value less than threshold",
        Toleration(key="test-key", operator="Gt", value="9223372036854775806", effect=NS),
        Taint("test-key", "100", NS),
        False,
    ),
]


@pytest.mark.parametrize(("description", "toleration", "taint", "expected"), UPSTREAM_TOLERATES)
def test_upstream_tolerates_taint(description: str, toleration: Toleration, taint: Taint, expected: bool) -> None:
    assert tolerates(toleration, taint, enable_comparison_operators=True) is expected, description


@pytest.mark.parametrize(("description", "toleration", "taint", "expected"), UPSTREAM_TOLERATES)
def test_comparison_operators_are_gated(description: str, toleration: Toleration, taint: Taint, expected: bool) -> None:
    # With the alpha gate off (kube-scheduler's default) Lt/Gt tolerate nothing.
    gated = expected and toleration.operator not in ("Lt", "Gt")
    assert tolerates(toleration, taint) is gated, description


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        (Toleration(operator="Exists"), Taint("any", "thing", NE), True),  # tolerates everything
        (Toleration(key="k", operator="Exists"), Taint("k", "v", PNS), True),  # empty effect: all effects
        (Toleration(key="k", operator="Exists"), Taint("other", "v", NS), False),
        (Toleration(key="k", value="v"), Taint("k", "v", NE), True),  # empty operator means Equal
        (Toleration(key="", value="v"), Taint("any", "v", NS), True),  # empty key with Equal: value only
        (Toleration(key="", value="v"), Taint("any", "w", NS), False),
        (Toleration(key="k", operator="Exists", effect=NE), Taint("k", "", NS), False),
    ],
)
def test_matching_rules(toleration: Toleration, taint: Taint, expected: bool) -> None:
    assert tolerates(toleration, taint) is expected


@pytest.mark.parametrize(
    ("threshold", "actual", "expected"),
    [
        ("10", "9", True),
        ("10", "10", False),
        ("0", "-1", True),
        ("10", "09", False),  # leading zeros are not canonical decimal integers
        ("010", "9", False),
        ("10", "+9", False),
        ("10", "-0", False),
        ("10", "", False),
        ("", "9", False),
        ("-9223372036854775808", "-9223372036854775808", False),
        ("-9223372036854775807", "-9223372036854775808", True),
        ("9223372036854775808", "1", False),  # beyond int64
        ("10", "٣", False),  # a non-ASCII digit
    ],
)
def test_lt_canonical_integers(threshold: str, actual: str, expected: bool) -> None:
    toleration = Toleration(key="k", operator="Lt", value=threshold)
    assert tolerates(toleration, Taint("k", actual, NS), enable_comparison_operators=True) is expected


# --------------------------------------------------------------------- parsing


def test_toleration_from_dict_defaults() -> None:
    assert Toleration.from_dict({}) == Toleration("", "Equal", "", "", None)
    assert Toleration.from_dict({"operator": ""}).operator == "Equal"
    assert Toleration.from_dict({"operator": None, "key": None, "value": None, "effect": None}) == Toleration()
    full = Toleration.from_dict(
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": NE, "tolerationSeconds": 300}
    )
    assert full == Toleration("node.kubernetes.io/not-ready", "Exists", "", NE, 300)
    assert Toleration.from_dict({"operator": "Gt", "value": "5"}).operator == "Gt"


def test_taint_from_dict() -> None:
    assert Taint.from_dict({"key": "k", "value": "v", "effect": NS, "timeAdded": "2024-01-01T00:00:00Z"}) == Taint(
        "k", "v", NS
    )
    assert Taint.from_dict({"key": "k", "effect": PNS}) == Taint("k", "", PNS)
    assert str(Taint("k", "v", NS)) == "k=v:NoSchedule"
    assert str(Taint("k", "", NE)) == "k:NoExecute"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"operator": "Sometimes"}, "toleration.operator: unsupported value 'Sometimes'"),
        ({"operator": "exists"}, "toleration.operator: unsupported value 'exists'"),
        ({"effect": "NoScheduel"}, "toleration.effect: unsupported value 'NoScheduel'"),
        ({"key": 5}, "toleration.key: expected a string"),
        ({"value": ["a"]}, "toleration.value: expected a string"),
        ({"tolerationSeconds": "300"}, "toleration.tolerationSeconds: expected an integer"),
        ({"tolerationSeconds": True}, "toleration.tolerationSeconds: expected an integer"),
        ([], "toleration: expected an object"),
    ],
)
def test_bad_tolerations(raw: Any, message: str) -> None:
    with pytest.raises(TaintError) as info:
        Toleration.from_dict(raw)
    assert str(info.value).startswith(message)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"effect": NS}, "taint.key: required value"),
        ({"key": "", "effect": NS}, "taint.key: required value"),
        ({"key": "k"}, "taint.effect: unsupported value ''"),
        ({"key": "k", "effect": "Evict"}, "taint.effect: unsupported value 'Evict'"),
        ({"key": "k", "effect": NS, "value": 1}, "taint.value: expected a string"),
        ("k=v:NoSchedule", "taint: expected an object"),
    ],
)
def test_bad_taints(raw: Any, message: str) -> None:
    with pytest.raises(TaintError) as info:
        Taint.from_dict(raw)
    assert str(info.value).startswith(message)


def test_parse_lists() -> None:
    assert parse_taints(None) == ()
    assert parse_tolerations(None) == ()
    taints = parse_taints([{"key": "a", "effect": NS}, {"key": "b", "value": "1", "effect": NE}])
    assert taints == (Taint("a", "", NS), Taint("b", "1", NE))
    assert parse_tolerations([{"operator": "Exists"}]) == (Toleration(operator="Exists"),)
    with pytest.raises(TaintError, match=r"^spec\.taints\[1\]\.effect"):
        parse_taints([{"key": "a", "effect": NS}, {"key": "b"}])
    with pytest.raises(TaintError, match=r"^spec\.tolerations\[0\]\.operator"):
        parse_tolerations([{"operator": "x"}])
    with pytest.raises(TaintError, match=r"^spec\.taints: expected a list"):
        parse_taints({"key": "a"})
    with pytest.raises(TaintError, match=r"^spec\.tolerations: expected a list"):
        parse_tolerations("Exists")


def test_records_are_frozen_and_slotted() -> None:
    taint = Taint("k", "v", NS)
    with pytest.raises(AttributeError):
        taint.key = "other"  # type: ignore[misc]
    assert not hasattr(taint, "__dict__")
    assert not hasattr(Toleration(), "__dict__")
    assert hash(taint) == hash(Taint("k", "v", NS))


# ----------------------------------------------------------- untolerated taint search


def test_find_untolerated_taint() -> None:
    taints = [Taint("soft", "", PNS), Taint("a", "1", NS), Taint("b", "2", NE)]
    assert find_untolerated_taint([], [], FILTER_EFFECTS) is None
    # PreferNoSchedule is outside the filter's effects; the first remaining one is reported.
    assert find_untolerated_taint(taints, [], FILTER_EFFECTS) == Taint("a", "1", NS)
    tolerate_a = Toleration(key="a", value="1")
    assert find_untolerated_taint(taints, [tolerate_a], FILTER_EFFECTS) == Taint("b", "2", NE)
    assert find_untolerated_taint(taints, [tolerate_a, Toleration(key="b", operator="Exists")], FILTER_EFFECTS) is None
    assert find_untolerated_taint(taints, [Toleration(operator="Exists")], FILTER_EFFECTS) is None
    assert find_untolerated_taint(taints, [], frozenset({PNS})) == Taint("soft", "", PNS)
    assert find_untolerated_taint(taints, [Toleration(operator="Exists", effect=NS)], FILTER_EFFECTS) == taints[2]


def test_find_untolerated_taint_with_comparison_operators() -> None:
    taints = [Taint("sla", "900", NS)]
    tolerations = [Toleration(key="sla", operator="Gt", value="800")]
    assert find_untolerated_taint(taints, tolerations, FILTER_EFFECTS) == taints[0]
    assert find_untolerated_taint(taints, tolerations, FILTER_EFFECTS, enable_comparison_operators=True) is None
    assert tolerations_tolerate_taint(tolerations, taints[0], enable_comparison_operators=True)
    assert not tolerations_tolerate_taint([], taints[0])


effects = st.sampled_from(sorted(TAINT_EFFECTS))
keys = st.sampled_from(["a", "b", "node.kubernetes.io/x"])
values = st.sampled_from(["", "1", "2", "x"])
taint_strategy = st.builds(Taint, keys, values, effects)
toleration_strategy = st.builds(
    Toleration,
    st.sampled_from(["", "a", "b"]),
    st.sampled_from(["Equal", "Exists"]),
    values,
    st.sampled_from(["", *sorted(TAINT_EFFECTS)]),
)


def naive_tolerates(toleration: Toleration, taint: Taint) -> bool:
    """The upstream rules as a single boolean expression."""
    return (
        (toleration.effect in ("", taint.effect))
        and (toleration.key in ("", taint.key))
        and (toleration.operator == "Exists" or toleration.value == taint.value)
    )


@given(st.lists(taint_strategy, max_size=5), st.lists(toleration_strategy, max_size=4))
def test_find_untolerated_taint_matches_reference(taints: list[Taint], tolerations: list[Toleration]) -> None:
    expected = next(
        (t for t in taints if t.effect in FILTER_EFFECTS and not any(naive_tolerates(tol, t) for tol in tolerations)),
        None,
    )
    assert find_untolerated_taint(taints, tolerations, FILTER_EFFECTS) == expected
    for toleration in tolerations:
        for taint in taints:
            assert tolerates(toleration, taint) is naive_tolerates(toleration, taint)
