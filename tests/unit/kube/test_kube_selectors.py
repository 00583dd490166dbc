"""Tests for extender.kube.selectors, with upstream's nodeaffinity_test.go and selector tests as data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extender.kube.selectors import (
    EVERYTHING,
    NOTHING,
    LabelSelector,
    SelectorError,
    compile_label_selector,
    compile_node_selector,
    compile_preferred_terms,
    compile_required_node_affinity,
    label_key_errors,
    label_value_errors,
)

NAME_REGEX_ERROR = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def req(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def term(expressions: list[dict[str, Any]] | None = None, fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if expressions is not None:
        out["matchExpressions"] = expressions
    if fields is not None:
        out["matchFields"] = fields
    return out


# ------------------------------------------------------------------- TestNodeSelectorMatch

INVALID_SELECTOR = {
    "nodeSelectorTerms": [
        term(fields=[req("metadata.name", "In", "host_1", "host_2")]),
        term([req("label_1", "In", "label_1_val")], [req("metadata.name", "In", "host_1")]),
        term([req("invalid key", "In", "label_value")]),
    ]
}


def test_upstream_node_selector_invalid_strict() -> None:
    with pytest.raises(SelectorError) as info:
        compile_node_selector(INVALID_SELECTOR, strict=True)
    errors = info.value.errors
    assert len(errors) == 2
    assert errors[0].startswith("nodeSelectorTerms[0].matchFields[0].values: Invalid value:")
    assert errors[0].endswith("must have one element")
    assert errors[1].startswith("nodeSelectorTerms[2].matchExpressions[0].key: Invalid value: 'invalid key'")
    assert errors[1].endswith(NAME_REGEX_ERROR)


def test_lazy_node_selector_errors_only_when_nothing_matches() -> None:
    selector = compile_node_selector(INVALID_SELECTOR)
    assert len(selector.errors) == 2
    # The valid middle term still matches: no error reported (LazyErrorNodeSelector).
    assert selector.match({"label_1": "label_1_val"}, "host_1") == (True, ())
    assert selector.matches({"label_1": "label_1_val"}, "host_1")
    matched, errors = selector.match({"label_1": "label_1_val"}, "host_2")
    assert not matched
    assert errors == selector.errors
    # An errored term never matches, even where its valid parts would.
    assert not compile_node_selector([term(fields=[req("metadata.name", "In", "a", "b")])]).matches({}, "a")


@pytest.mark.parametrize(
    ("selector", "labels", "name", "want"),
    [
        (
            [term([req("label_1", "In", "label_1_val")], [req("metadata.name", "In", "host_1")])],
            {},
            "host_1",
            False,  # node matches field selector, but not labels
        ),
        (
            [term([req("label_1", "In", "label_1_val")], [req("metadata.name", "In", "host_1")])],
            {"label_1": "label_1_val"},
            "host_1",
            True,  # node matches field selector and label selector
        ),
        (
            [term([req("label_1", "In", "label_1_val")]), term(fields=[req("metadata.name", "In", "host_1")])],
            {},
            "host_1",
            True,  # second term matches
        ),
    ],
)
def test_upstream_node_selector_match(
    selector: list[dict[str, Any]], labels: dict[str, str], name: str, want: bool
) -> None:
    compiled = compile_node_selector({"nodeSelectorTerms": selector}, strict=True)
    assert compiled.matches(labels, name) is want
    assert compile_node_selector(selector).matches(labels, name) is want


# ------------------------------------------------------- TestPreferredSchedulingTermsScore


def test_upstream_preferred_terms_invalid() -> None:
    terms = [
        {"weight": 1, "preference": term(fields=[req("metadata.name", "In", "host_1", "host_2")])},
        {
            "weight": 1,
            "preference": term([req("label_1", "In", "label_1_val")], [req("metadata.name", "In", "host_1")]),
        },
        {"weight": 1, "preference": term([req("invalid key", "In", "label_value")])},
    ]
    with pytest.raises(SelectorError) as info:
        compile_preferred_terms(terms)
    errors = info.value.errors
    assert len(errors) == 2
    assert errors[0].startswith("[0].matchFields[0].values: Invalid value:")
    assert errors[1].startswith("[2].matchExpressions[0].key: Invalid value:")
    assert errors[1].endswith(NAME_REGEX_ERROR)


def test_upstream_preferred_terms_zero_weight_is_not_validated() -> None:
    terms = [{"weight": 0, "preference": term(fields=[req("metadata.name", "In", "host_1", "host_2")])}]
    assert compile_preferred_terms(terms).score({}, "host_1") == 0


def test_upstream_preferred_terms_first_and_third_match() -> None:
    terms = [
        {"weight": 5, "preference": term(fields=[req("metadata.name", "In", "host_1")])},
        {"weight": 7, "preference": term([req("unknown_label", "In", "unknown_label_val")])},
        {"weight": 11, "preference": term([req("label_1", "In", "label_1_val")])},
    ]
    compiled = compile_preferred_terms(terms)
    assert compiled.score({"label_1": "label_1_val"}, "host_1") == 16
    assert compiled.score({}, "host_2") == 0
    assert bool(compiled)


def test_preferred_terms_edge_cases() -> None:
    assert not compile_preferred_terms(None)
    assert not compile_preferred_terms([])
    assert not compile_preferred_terms([{"weight": 3, "preference": {}}])  # empty term skipped
    assert not compile_preferred_terms([{"weight": None, "preference": term([req("a", "Exists")])}])
    negative = compile_preferred_terms([{"weight": -4, "preference": term([req("a", "Exists")])}])
    assert negative.score({"a": ""}, "n") == -4
    with pytest.raises(SelectorError, match=r"\[0\]\.weight: expected an integer"):
        compile_preferred_terms([{"weight": "5", "preference": term([req("a", "Exists")])}])
    with pytest.raises(SelectorError, match=r"\[0\]\.weight"):
        compile_preferred_terms([{"weight": True, "preference": term([req("a", "Exists")])}])
    with pytest.raises(SelectorError):
        compile_preferred_terms([5])  # type: ignore[list-item]


# ----------------------------------------------------- TestNodeSelectorRequirementsAsSelector


def test_upstream_requirements_as_selector() -> None:
    with pytest.raises(SelectorError) as info:
        compile_node_selector([term([req("foo", "Exists", "bar", "baz")])], strict=True)
    assert info.value.errors[0].startswith("nodeSelectorTerms[0].matchExpressions[0].values: Invalid value:")
    assert info.value.errors[0].endswith("values set must be empty for exists and does not exist")
    in_selector = compile_node_selector([term([req("foo", "In", "bar", "baz")])], strict=True)
    assert in_selector.matches({"foo": "baz"}, "")
    assert not in_selector.matches({"foo": "qux"}, "")
    gt = compile_node_selector([term([req("foo", "Gt", "1")])], strict=True)
    assert gt.matches({"foo": "2"}, "") and not gt.matches({"foo": "1"}, "")
    lt = compile_node_selector([term([req("bar", "Lt", "7")])], strict=True)
    assert lt.matches({"bar": "6"}, "") and not lt.matches({"bar": "7"}, "")


# ------------------------------------------------- TestPodMatchesNodeSelectorAndAffinityTerms


def affinity_pod(
    node_selector: dict[str, str] | None = None, required: dict[str, Any] | None = None, has_required: bool = True
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if required is not None or not has_required:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    return {"spec": spec}


def terms(*items: dict[str, Any]) -> dict[str, Any]:
    return {"nodeSelectorTerms": list(items)}


POD_AFFINITY_CASES: list[tuple[str, dict[str, Any], dict[str, str], str, bool]] = [
    ("no selector", {}, {}, "", True),
    ("missing labels", affinity_pod({"foo": "bar"}), {}, "", False),
    ("same labels", affinity_pod({"foo": "bar"}), {"foo": "bar"}, "", True),
    ("node labels are superset", affinity_pod({"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "", True),
    ("node labels are subset", affinity_pod({"foo": "bar", "baz": "blah"}), {"foo": "bar"}, "", False),
    (
        "matchExpressions using In operator that matches the existing node",
        affinity_pod(required=terms(term([req("foo", "In", "bar", "value2")]))),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "matchExpressions using Gt operator that matches the existing node",
        affinity_pod(required=terms(term([req("kernel-version", "Gt", "0204")]))),
        {"kernel-version": "0206"},
        "",
        True,
    ),
    (
        "matchExpressions using NotIn operator that matches the existing node",
        affinity_pod(required=terms(term([req("mem-type", "NotIn", "DDR", "DDR2")]))),
        {"mem-type": "DDR3"},
        "",
        True,
    ),
    (
        "matchExpressions using Exists operator that matches the existing node",
        affinity_pod(required=terms(term([req("GPU", "Exists")]))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        True,
    ),
    (
        "affinity that don't match node's labels won't schedule onto the node",
        affinity_pod(required=terms(term([req("foo", "In", "value1", "value2")]))),
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "a nil []NodeSelectorTerm in affinity can't match",
        affinity_pod(required={"nodeSelectorTerms": None}),
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "an empty []NodeSelectorTerm in affinity can't match",
        affinity_pod(required={"nodeSelectorTerms": []}),
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "empty MatchExpressions will match no objects",
        affinity_pod(required=terms({"matchExpressions": []})),
        {"foo": "bar"},
        "",
        False,
    ),
    ("no Affinity will schedule onto a node", {"spec": {}}, {"foo": "bar"}, "", True),
    (
        "Affinity but nil NodeSelector will schedule onto a node",
        affinity_pod(required=None, has_required=False),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "multiple matchExpressions ANDed that matches the existing node",
        affinity_pod(required=terms(term([req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")]))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        True,
    ),
    (
        "multiple matchExpressions ANDed that doesn't match the existing node",
        affinity_pod(required=terms(term([req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER")]))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        False,
    ),
    (
        "multiple NodeSelectorTerms ORed in affinity, matches the node's labels",
        affinity_pod(
            required=terms(term([req("foo", "In", "bar", "value2")]), term([req("diffkey", "In", "wrong", "value2")]))
        ),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "Affinity and PodSpec.NodeSelector both satisfied",
        affinity_pod({"foo": "bar"}, terms(term([req("foo", "Exists")]))),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "Affinity matches but PodSpec.NodeSelector is not satisfied",
        affinity_pod({"foo": "bar"}, terms(term([req("foo", "Exists")]))),
        {"foo": "barrrrrr"},
        "",
        False,
    ),
    (
        "an invalid value in Affinity term won't be scheduled onto the node",
        affinity_pod(required=terms(term([req("foo", "NotIn", "invalid value: ___@#$%^")]))),
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "matchFields using In operator that matches the existing node",
        affinity_pod(required=terms(term(fields=[req("metadata.name", "In", "node_1")]))),
        {},
        "node_1",
        True,
    ),
    (
        "matchFields using In operator that does not match the existing node",
        affinity_pod(required=terms(term(fields=[req("metadata.name", "In", "node_1")]))),
        {},
        "node_2",
        False,
    ),
    (
        "two terms: matchFields does not match, but matchExpressions matches",
        affinity_pod(
            required=terms(term(fields=[req("metadata.name", "In", "node_1")]), term([req("foo", "In", "bar")]))
        ),
        {"foo": "bar"},
        "node_2",
        True,
    ),
    (
        "one term: matchFields does not match, but matchExpressions matches",
        affinity_pod(required=terms(term([req("foo", "In", "bar")], [req("metadata.name", "In", "node_1")]))),
        {"foo": "bar"},
        "node_2",
        False,
    ),
    (
        "one term: both matchFields and matchExpressions match",
        affinity_pod(required=terms(term([req("foo", "In", "bar")], [req("metadata.name", "In", "node_1")]))),
        {"foo": "bar"},
        "node_1",
        True,
    ),
    (
        "two terms: both matchFields and matchExpressions do not match",
        affinity_pod(
            required=terms(
                term(fields=[req("metadata.name", "In", "node_1")]), term([req("foo", "In", "not-match-to-bar")])
            )
        ),
        {"foo": "bar"},
        "node_2",
        False,
    ),
]


@pytest.mark.parametrize(("name", "raw", "labels", "node_name", "want"), POD_AFFINITY_CASES)
def test_upstream_pod_matches_node_selector_and_affinity(
    name: str, raw: dict[str, Any], labels: dict[str, str], node_name: str, want: bool
) -> None:
    compiled = compile_required_node_affinity(raw)
    assert compiled.matches(labels, node_name) is want, name
    assert compiled.match(labels, node_name)[0] is want, name


def test_required_affinity_match_reports_lazy_errors() -> None:
    raw = affinity_pod({"zone": "a"}, terms(term([req("bad key!", "Exists")]), term([req("ok", "Exists")])))
    compiled = compile_required_node_affinity(raw)
    assert not compiled.empty
    assert compiled.match({"zone": "a", "ok": "1"}, "n") == (True, ())
    matched, errors = compiled.match({"zone": "a"}, "n")
    assert not matched and len(errors) == 1 and "bad key!" in errors[0]
    # A failing nodeSelector short-circuits without errors, as upstream.
    assert compiled.match({"zone": "b"}, "n") == (False, ())
    assert compile_required_node_affinity({"spec": {}}).empty
    assert compile_required_node_affinity({}).match({}, "") == (True, ())


def test_node_selector_map_is_not_validated() -> None:
    # SelectorFromSet: invalid keys/values are compared verbatim.
    compiled = compile_required_node_affinity({"spec": {"nodeSelector": {"bad key!": "v@l"}}})
    assert compiled.matches({"bad key!": "v@l"}, "")
    assert not compiled.matches({}, "")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], "pod: expected an object"),
        ({"spec": 1}, "spec: expected an object"),
        ({"spec": {"nodeSelector": ["a"]}}, "spec.nodeSelector: expected an object"),
        ({"spec": {"nodeSelector": {"a": 1}}}, "spec.nodeSelector.a: expected a string"),
        ({"spec": {"affinity": []}}, "spec.affinity: expected an object"),
        ({"spec": {"affinity": {"nodeAffinity": 3}}}, "spec.affinity.nodeAffinity: expected an object"),
        (
            {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}}}},
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution: expected an object",
        ),
    ],
)
def test_required_affinity_type_errors(raw: object, message: str) -> None:
    with pytest.raises(SelectorError) as info:
        compile_required_node_affinity(raw)  # type: ignore[arg-type]
    assert str(info.value).startswith(message)


# ------------------------------------------------------------------- node selector details


def test_match_fields_semantics() -> None:
    def matches(field: dict[str, Any], name: str) -> bool:
        return compile_node_selector([term(fields=[field])], strict=True).matches({}, name)

    assert matches(req("metadata.name", "In", "n1"), "n1")
    assert not matches(req("metadata.name", "In", "n1"), "n2")
    assert matches(req("metadata.name", "NotIn", "n1"), "n2")
    assert not matches(req("metadata.name", "NotIn", "n1"), "n1")
    # Keys other than metadata.name read as "" (upstream fields.Set lookup).
    assert not matches(req("spec.nodeName", "In", "n1"), "n1")
    assert matches(req("spec.nodeName", "In", ""), "n1")
    assert matches(req("spec.nodeName", "NotIn", "n1"), "n1")
    assert not matches(req("spec.nodeName", "NotIn", ""), "n1")
    # An empty node name means an empty field set: field requirements are skipped.
    assert matches(req("metadata.name", "In", "n1"), "")


@pytest.mark.parametrize(
    ("field", "detail"),
    [
        (req("metadata.name", "Exists"), 'Unsupported value: "Exists": supported values: "In", "NotIn"'),
        (req("metadata.name", "Gt", "1"), 'Unsupported value: "Gt"'),
        (req("metadata.name", "In"), "must have one element"),
        (req("metadata.name", "NotIn", "a", "b"), "must have one element"),
    ],
)
def test_match_fields_errors(field: dict[str, Any], detail: str) -> None:
    selector = compile_node_selector([term(fields=[field])])
    assert len(selector.errors) == 1 and detail in selector.errors[0]
    assert not selector.matches({}, "a")


def test_empty_terms_match_nothing() -> None:
    assert not compile_node_selector([]).matches({"a": "b"}, "n")
    assert not compile_node_selector({"nodeSelectorTerms": None}).matches({"a": "b"}, "n")
    assert not compile_node_selector({}).matches({}, "n")
    assert not compile_node_selector([{}, {"matchExpressions": None, "matchFields": []}]).matches({}, "n")
    assert compile_node_selector([{}, term([req("a", "DoesNotExist")])]).matches({}, "n")
    assert compile_node_selector([{}, {}]).terms == ()


def test_gt_lt_semantics() -> None:
    def gt(bound: str) -> Any:
        return compile_node_selector([term([req("v", "Gt", bound)])], strict=True)

    assert gt("5").matches({"v": "6"}, "")
    assert not gt("5").matches({"v": "5"}, "")
    assert not gt("5").matches({}, "")
    assert not gt("5").matches({"v": "six"}, "")
    assert not gt("5").matches({"v": " 6"}, "")
    assert not gt("5").matches({"v": "6.0"}, "")
    assert gt("5").matches({"v": "+6"}, "")  # strconv.ParseInt accepts a leading +
    assert gt("5").matches({"v": "0006"}, "")
    assert not gt("5").matches({"v": "99999999999999999999"}, "")  # beyond int64
    assert gt("0204").matches({"v": "0206"}, "")
    lt = compile_node_selector([term([req("v", "Lt", "1")])], strict=True)
    assert lt.matches({"v": "-5"}, "")
    assert lt.matches({"v": "-9223372036854775808"}, "")


@pytest.mark.parametrize(
    ("expression", "fragment"),
    [
        # TestRequirementConstructor, plus label-value validation of every operator.
        (req("x1", "In"), "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"),
        (req("x2", "NotIn"), "values set can't be empty"),
        (req("x13", "Gt"), "for 'Gt', 'Lt' operators, exactly one value is required"),
        (
            req("x14", "Gt", "bar"),
            "values[0]: Invalid value: 'bar': for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (req("x15", "Lt", "bar"), "the value must be an integer"),
        (req("x", "Gt", "1", "2"), "exactly one value is required"),
        (req("x", "Gt", "-1"), "values[0][x]: Invalid value: '-1': a valid label must be an empty string"),
        (req("x", "Lt", "99999999999999999999"), "the value must be an integer"),
        (req("x16", "In", "a" * 254), "values[0][x16]: Invalid value: 'aaa"),
        (req("x17", "In", "a b"), "values[0][x17]: Invalid value: 'a b'"),
        (req("x", "Exists", "v"), "values set must be empty for exists and does not exist"),
        (req("x", "DoesNotExist", "v"), "values set must be empty"),
        (req("x18", "unsupportedOp"), 'operator: Unsupported value: "unsupportedOp": supported values: "In"'),
        (req("", "Exists"), "key: Invalid value: '': name part must be non-empty"),
        (req("a/b/c", "Exists"), "a qualified name must consist of"),
        (req("/b", "Exists"), "prefix part must be non-empty"),
        (req("Example.com/b", "Exists"), "prefix part a lowercase RFC 1123 subdomain"),
        (req("x" * 254 + "/b", "Exists"), "prefix part must be no more than 253 characters"),
        (req("a/", "Exists"), "name part must be non-empty"),
        (req("a" * 64, "Exists"), "name part must be no more than 63 characters"),
        (req("-a", "Exists"), NAME_REGEX_ERROR),
    ],
)
def test_requirement_validation(expression: dict[str, Any], fragment: str) -> None:
    selector = compile_node_selector([term([expression])])
    assert selector.errors, expression
    assert any(fragment in error for error in selector.errors), selector.errors
    assert all(error.startswith("nodeSelectorTerms[0].matchExpressions[0].") for error in selector.errors)
    with pytest.raises(SelectorError):
        compile_node_selector([term([expression])], strict=True)


@pytest.mark.parametrize(
    "key",
    ["a", "A", "a.b-c_d", "9", "example.com/MyName", "kubernetes.io/hostname", "a" * 63, "a" * 253 + "/" + "b" * 63],
)
def test_valid_label_keys(key: str) -> None:
    assert label_key_errors(key) == []


@pytest.mark.parametrize("val", ["", "a", "A-b_c.d", "0204", "a" * 63])
def test_valid_label_values(val: str) -> None:
    assert label_value_errors(val) == []


@pytest.mark.parametrize("val", ["-a", "a-", "a b", "a" * 64, "é", "a\n"])
def test_invalid_label_values(val: str) -> None:
    assert label_value_errors(val)


def test_empty_name_reports_both_errors_like_upstream() -> None:
    assert label_key_errors("") == ["name part must be non-empty", NAME_REGEX_ERROR]


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("x", "nodeSelectorTerms: expected a list"),
        ({"nodeSelectorTerms": {"a": 1}}, "nodeSelectorTerms: expected a list"),
        ([1], "nodeSelectorTerms[0]: expected an object"),
        ([{"matchExpressions": {}}], "nodeSelectorTerms[0].matchExpressions: expected a list"),
        ([{"matchExpressions": [[]]}], "nodeSelectorTerms[0].matchExpressions[0]: expected an object"),
        ([term([{"key": 1, "operator": "Exists"}])], "nodeSelectorTerms[0].matchExpressions[0].key: expected a string"),
        ([term([{"key": "a", "operator": 1}])], "nodeSelectorTerms[0].matchExpressions[0].operator"),
        ([term([{"key": "a", "operator": "In", "values": "b"}])], "matchExpressions[0].values: expected a list"),
        ([term([{"key": "a", "operator": "In", "values": [1]}])], "matchExpressions[0].values[0]: expected a string"),
        ([term(fields=[{"key": "a", "operator": "In", "values": [None, 2]}])], "matchFields[0].values[1]"),
    ],
)
def test_node_selector_type_errors(selector: object, message: str) -> None:
    with pytest.raises(SelectorError) as info:
        compile_node_selector(selector)  # type: ignore[arg-type]
    assert message in str(info.value)


# ------------------------------------------------------------------ label selectors


def test_label_selector_nil_and_empty() -> None:
    # LabelSelectorAsSelector: nil selects nothing, {} everything.
    assert compile_label_selector(None) is NOTHING
    assert not NOTHING.matches({})
    assert not NOTHING.empty and NOTHING.matches_nothing
    empties: list[dict[str, Any]] = [{}, {"matchLabels": {}}, {"matchLabels": None, "matchExpressions": []}]
    for empty in empties:
        compiled = compile_label_selector(empty)
        assert compiled is EVERYTHING
        assert compiled.matches({}) and compiled.matches({"a": "b"})
        assert compiled.empty and not compiled.matches_nothing


# TestLabelSelectorAsSelector in apimachinery/pkg/apis/meta/v1/helpers_test.go, expressed as
# (selector, labels that must match, labels that must not).
LABEL_SELECTOR_CASES: list[tuple[dict[str, Any], list[dict[str, str]], list[dict[str, str]]]] = [
    (
        {"matchLabels": {"foo": "bar"}, "matchExpressions": [req("baz", "In", "qux", "norf")]},
        [{"foo": "bar", "baz": "qux"}, {"foo": "bar", "baz": "norf", "x": "y"}],
        [{"foo": "bar"}, {"foo": "bar", "baz": "other"}, {"baz": "qux"}],
    ),
    (
        {
            "matchLabels": {"foo": "bar"},
            "matchExpressions": [req("baz", "In", "qux", "norf"), req("x", "NotIn", "y"), req("z", "Exists")],
        },
        [{"foo": "bar", "baz": "qux", "z": ""}, {"foo": "bar", "baz": "qux", "z": "1", "x": "w"}],
        [{"foo": "bar", "baz": "qux", "z": "", "x": "y"}, {"foo": "bar", "baz": "qux"}],
    ),
    (
        {"matchExpressions": [req("gone", "DoesNotExist")]},
        [{}, {"other": "x"}],
        [{"gone": ""}, {"gone": "x"}],
    ),
    (
        {"matchLabels": {"empty": ""}},
        [{"empty": ""}],
        [{}, {"empty": "x"}],
    ),
]


@pytest.mark.parametrize(("selector", "yes", "no"), LABEL_SELECTOR_CASES)
def test_label_selector_matching(selector: dict[str, Any], yes: list[dict[str, str]], no: list[dict[str, str]]) -> None:
    compiled = compile_label_selector(selector)
    assert not compiled.empty
    for labels in yes:
        assert compiled.matches(labels), labels
    for labels in no:
        assert not compiled.matches(labels), labels


@pytest.mark.parametrize(
    ("selector", "fragment"),
    [
        (
            {"matchExpressions": [req("foo", "not-a-valid-op", "bar")]},
            "'not-a-valid-op' is not a valid label selector operator",
        ),
        ({"matchExpressions": [req("foo", "Gt", "1")]}, "is not a valid label selector operator"),
        ({"matchExpressions": [req("foo", "In")]}, "values set can't be empty"),
        ({"matchExpressions": [req("foo", "Exists", "x")]}, "values set must be empty"),
        ({"matchExpressions": [req("bad key", "Exists")]}, "matchExpressions[0].key: Invalid value: 'bad key'"),
        ({"matchLabels": {"bad key": "v"}}, "matchLabels.bad key.key: Invalid value"),
        ({"matchLabels": {"k": "bad value"}}, "matchLabels.k.values[0][k]: Invalid value: 'bad value'"),
        ({"matchLabels": {"k": 1}}, "matchLabels.k: expected a string"),
        ({"matchLabels": {1: "v"}}, "matchLabels: expected a string"),
        ({"matchLabels": ["a"]}, "matchLabels: expected an object"),
        ({"matchExpressions": {"a": 1}}, "matchExpressions: expected a list"),
        ({"matchExpressions": ["x"]}, "matchExpressions[0]: expected an object"),
        ([], "selector: expected an object"),
    ],
)
def test_label_selector_errors(selector: object, fragment: str) -> None:
    with pytest.raises(SelectorError) as info:
        compile_label_selector(selector)  # type: ignore[arg-type]
    assert fragment in str(info.value)


def test_label_selector_error_path_prefix() -> None:
    with pytest.raises(SelectorError, match=r"^spec\.selector\.matchExpressions\[0\]\.operator"):
        compile_label_selector({"matchExpressions": [req("a", "Nope")]}, path="spec.selector")


def test_label_selector_records_are_comparable() -> None:
    a = compile_label_selector({"matchLabels": {"b": "1", "a": "2"}})
    b = compile_label_selector({"matchExpressions": [], "matchLabels": {"a": "2", "b": "1"}})
    assert a == b and hash(a) == hash(b)
    assert [r.key for r in a.requirements] == ["a", "b"]
    assert a != NOTHING and NOTHING != EVERYTHING
    assert a != "x"
    assert "LabelSelector" in repr(a) and "nothing" in repr(NOTHING)
    assert a.requirements[0].matches({"a": "2"})


def test_selectors_accept_any_mapping_of_labels() -> None:
    class Labels(Mapping[str, str]):
        def __init__(self, data: dict[str, str]) -> None:
            self._data = data

        def __getitem__(self, key: str) -> str:
            return self._data[key]

        def __iter__(self) -> Any:
            return iter(self._data)

        def __len__(self) -> int:
            return len(self._data)

    compiled = compile_label_selector({"matchExpressions": [req("a", "In", "1", "2"), req("b", "DoesNotExist")]})
    assert compiled.matches(Labels({"a": "2"}))
    assert not compiled.matches(Labels({"a": "2", "b": ""}))


# ------------------------------------------------------------------ property tests

KEYS = ["a", "b", "c", "example.com/d"]
VALUES = ["", "x", "y", "1", "2", "10", "-3"]

label_sets = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=4)
set_requirements: st.SearchStrategy[tuple[str, str, list[str]]] = st.one_of(
    st.tuples(
        st.sampled_from(KEYS),
        st.sampled_from(["In", "NotIn"]),
        st.lists(st.sampled_from(VALUES[:-1]), min_size=1, max_size=3),
    ),
    st.tuples(st.sampled_from(KEYS), st.sampled_from(["Exists", "DoesNotExist"]), st.just([])),
)
numeric_requirements = st.tuples(
    st.sampled_from(KEYS),
    st.sampled_from(["Gt", "Lt"]),
    st.lists(st.sampled_from(["0", "1", "5"]), min_size=1, max_size=1),
)


def naive_matches(labels: dict[str, str], key: str, operator: str, values: list[str]) -> bool:
    """A direct transcription of upstream Requirement.Matches."""
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if not present:
        return False
    try:
        number = int(labels[key])
    except ValueError:
        return False
    return number > int(values[0]) if operator == "Gt" else number < int(values[0])


@given(
    label_sets,
    st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES[:-1]), max_size=2),
    st.lists(set_requirements, max_size=4),
)
def test_label_selector_equals_naive_reference(
    labels: dict[str, str], match_labels: dict[str, str], expressions: list[tuple[str, str, list[str]]]
) -> None:
    selector = {
        "matchLabels": match_labels,
        "matchExpressions": [{"key": k, "operator": op, "values": vals} for k, op, vals in expressions],
    }
    compiled = compile_label_selector(selector)
    expected = all(labels.get(k) == v for k, v in match_labels.items()) and all(
        naive_matches(labels, k, op, vals) for k, op, vals in expressions
    )
    assert compiled.matches(labels) is expected
    assert isinstance(compiled, LabelSelector)


@given(
    label_sets,
    st.sampled_from(["", "n1", "n2"]),
    st.lists(
        st.tuples(
            st.lists(st.one_of(set_requirements, numeric_requirements), max_size=3),
            st.lists(st.tuples(st.sampled_from(["In", "NotIn"]), st.sampled_from(["n1", "n2", ""])), max_size=2),
        ),
        max_size=3,
    ),
)
def test_node_selector_equals_naive_reference(
    labels: dict[str, str],
    name: str,
    raw_terms: list[tuple[list[tuple[str, str, list[str]]], list[tuple[str, str]]]],
) -> None:
    terms_json = [
        {
            "matchExpressions": [{"key": k, "operator": op, "values": vals} for k, op, vals in exprs],
            "matchFields": [{"key": "metadata.name", "operator": op, "values": [v]} for op, v in fields],
        }
        for exprs, fields in raw_terms
    ]
    expected = False
    for exprs, fields in raw_terms:
        if not exprs and not fields:
            continue  # an empty term matches nothing
        ok = all(naive_matches(labels, k, op, vals) for k, op, vals in exprs)
        if name:
            ok = ok and all((name == v) == (op == "In") for op, v in fields)
        expected = expected or ok
    compiled = compile_node_selector(terms_json, strict=True)
    assert compiled.matches(labels, name) is expected
    assert compiled.match(labels, name) == (expected, ())
    weights = compile_preferred_terms([{"weight": 3, "preference": t} for t in terms_json])
    assert weights.score(labels, name) == 3 * sum(
        1
        for (exprs, fields), t in zip(raw_terms, terms_json, strict=True)
        if (exprs or fields) and compile_node_selector([t]).matches(labels, name)
    )


def test_a_selector_error_copies_and_pickles_with_every_problem() -> None:
    """A SelectorError kept (a template's compile refused, once per record) is raised again as a copy, and one
    crossing to a planning worker is pickled: both keep each problem and the message joining them."""
    import copy
    import pickle

    error = SelectorError(["spec.a: bad", "spec.b: worse"])
    for again in (copy.copy(error), pickle.loads(pickle.dumps(error))):
        assert type(again) is SelectorError and again is not error
        assert again.errors == ("spec.a: bad", "spec.b: worse") and str(again) == "spec.a: bad; spec.b: worse"
