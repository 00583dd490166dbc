"""Label selectors and node selectors, compiled once and matched fast.

Upstream:

* ``k8s.io/apimachinery/pkg/labels/selector.go``: ``Requirement`` (``NewRequirement``
  validation, ``Matches``) and selectors as ANDed requirements;
* ``k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go``: ``LabelSelectorAsSelector``
  (``nil`` selects nothing, ``{}`` selects everything);
* ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go``:
  ``LazyErrorNodeSelector``, ``NodeSelector``, ``PreferredSchedulingTerms`` and
  ``GetRequiredNodeAffinity``.

Raw objects are plain dicts in the apiserver's camelCase JSON form.  Compiling validates
them the way upstream does and precomputes frozensets and closures, so ``matches`` does no
dict walking beyond one lookup per requirement.

Error handling follows upstream.  A label selector with an invalid requirement or an
unknown operator fails as a whole (:class:`SelectorError`).  A node selector is *lazy*: an
invalid term never matches but does not stop the other terms from matching, and its
errors are only reported (by :meth:`NodeSelector.match`) when no term matched; kube-scheduler's
NodeAffinity filter ignores them altogether.  ``strict=True`` gives upstream's eager
``NewNodeSelector`` instead.  Preferred terms fail as a whole, like
``NewPreferredSchedulingTerms``.  Values of the wrong JSON type (a list where a string
belongs, ...) cannot come from an apiserver and always raise :class:`SelectorError`.

Node ``matchFields`` are evaluated against ``{"metadata.name": name}`` exactly as upstream
does: a key other than ``metadata.name`` reads as the empty string, and when the node name
is empty the field requirements are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "EVERYTHING",
    "NOTHING",
    "FieldRequirement",
    "LabelSelector",
    "NodeSelector",
    "NodeSelectorTerm",
    "PreferredTerms",
    "RequiredNodeAffinity",
    "Requirement",
    "SelectorError",
    "compile_label_selector",
    "compile_node_selector",
    "compile_preferred_terms",
    "compile_required_node_affinity",
    "label_key_errors",
    "label_value_errors",
]

Labels = Mapping[str, str]
_Check = Callable[[Labels], bool]

OP_IN: Final = "In"
OP_NOT_IN: Final = "NotIn"
OP_EXISTS: Final = "Exists"
OP_DOES_NOT_EXIST: Final = "DoesNotExist"
OP_GT: Final = "Gt"
OP_LT: Final = "Lt"
#: The operator of a ``matchLabels`` / ``nodeSelector`` entry (upstream ``selection.Equals``).
OP_EQUALS: Final = "="

_LABEL_SELECTOR_OPS: Final = (OP_IN, OP_NOT_IN, OP_EXISTS, OP_DOES_NOT_EXIST)
_NODE_SELECTOR_OPS: Final = (OP_IN, OP_NOT_IN, OP_EXISTS, OP_DOES_NOT_EXIST, OP_GT, OP_LT)
_FIELD_SELECTOR_OPS: Final = (OP_IN, OP_NOT_IN)
_OBJECT_NAME_FIELD: Final = "metadata.name"

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_QUALIFIED_NAME_MAX: Final = 63
_LABEL_VALUE_MAX: Final = 63
_DNS1123_SUBDOMAIN_MAX: Final = 253
_QUALIFIED_NAME_RE: Final = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE_RE: Final = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_DNS1123_SUBDOMAIN_RE: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_GO_INT_RE: Final = re.compile(r"[+-]?[0-9]+")

_QUALIFIED_NAME_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
    "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


class SelectorError(ValueError):
    """An invalid selector; ``errors`` lists every problem, each prefixed with its field path."""

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors: tuple[str, ...] = tuple(errors)
        super().__init__("; ".join(self.errors) if self.errors else "invalid selector")

    def __reduce__(self) -> tuple[type[SelectorError], tuple[tuple[str, ...]]]:
        # Copied and pickled from its errors (the default would rebuild it from its joined message).
        return SelectorError, (self.errors,)


# ------------------------------------------------------------------------ validation


def label_value_errors(value: str) -> list[str]:
    """Return upstream ``IsValidLabelValue``'s complaints about ``value`` (empty when valid)."""
    errors: list[str] = []
    if len(value) > _LABEL_VALUE_MAX:
        errors.append(f"must be no more than {_LABEL_VALUE_MAX} characters")
    elif not _LABEL_VALUE_RE.fullmatch(value):
        # The length check comes first so the regex never runs on long hostile input.
        errors.append(_LABEL_VALUE_MSG)
    return errors


def label_key_errors(key: str) -> list[str]:
    """Return upstream ``IsQualifiedName``'s complaints about a label key (empty when valid)."""
    errors: list[str] = []
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        elif len(prefix) > _DNS1123_SUBDOMAIN_MAX:
            errors.append(f"prefix part must be no more than {_DNS1123_SUBDOMAIN_MAX} characters")
        elif not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
            errors.append(f"prefix part {_DNS1123_SUBDOMAIN_MSG}")
    else:
        return [
            f"a qualified name {_QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > _QUALIFIED_NAME_MAX:
        errors.append(f"name part must be no more than {_QUALIFIED_NAME_MAX} characters")
        return errors
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errors.append(f"name part {_QUALIFIED_NAME_MSG}")
    return errors


def _parse_go_int64(text: str) -> int | None:
    """Parse like Go's ``strconv.ParseInt(text, 10, 64)``; ``None`` where Go returns an error."""
    if len(text) > 32 or not _GO_INT_RE.fullmatch(text):
        return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def _invalid(path: str, bad: object, detail: str) -> str:
    """Format one error the way upstream's ``field.Invalid`` reads: path, bad value, detail."""
    return f"{path}: Invalid value: {bad!r}: {detail}"


def _requirement_errors(key: str, operator: str, values: Sequence[str], path: str) -> list[str]:
    """Return upstream ``NewRequirement``'s validation errors, each prefixed with its field path."""
    errors = [_invalid(f"{path}key", key, msg) for msg in label_key_errors(key)]
    values_path = f"{path}values"
    listed = list(values)
    if operator in (OP_IN, OP_NOT_IN):
        if not values:
            errors.append(_invalid(values_path, listed, "for 'in', 'notin' operators, values set can't be empty"))
    elif operator == OP_EQUALS:
        if len(values) != 1:
            errors.append(_invalid(values_path, listed, "exact-match compatibility requires one single value"))
    elif operator in (OP_EXISTS, OP_DOES_NOT_EXIST):
        if values:
            errors.append(_invalid(values_path, listed, "values set must be empty for exists and does not exist"))
    elif operator in (OP_GT, OP_LT):
        if len(values) != 1:
            errors.append(_invalid(values_path, listed, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for index, item in enumerate(values):
            if _parse_go_int64(item) is None:
                detail = "for 'Gt', 'Lt' operators, the value must be an integer"
                errors.append(_invalid(f"{values_path}[{index}]", item, detail))
    else:  # pragma: no cover - callers map operators first
        errors.append(f"{path}operator: Unsupported value: {operator!r}")
    for index, item in enumerate(values):
        for msg in label_value_errors(item):
            errors.append(_invalid(f"{values_path}[{index}][{key}]", item, msg))
    return errors


# ---------------------------------------------------------------------- requirements


def _never(_labels: Labels) -> bool:
    """The check of a selector that matches nothing."""
    return False


@dataclass(frozen=True, slots=True)
class Requirement:
    """One compiled label requirement: ``key``, an operator and its values.

    ``operator`` is one of ``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``, ``Lt``
    or ``=`` (an exact match from ``matchLabels`` or ``nodeSelector``).
    """

    key: str
    operator: str
    values: tuple[str, ...]
    _check: _Check = field(repr=False, compare=False, hash=False)

    def matches(self, labels: Labels) -> bool:
        """Return whether ``labels`` satisfy this requirement (upstream ``Requirement.Matches``)."""
        return self._check(labels)


def _make_check(key: str, operator: str, values: tuple[str, ...]) -> _Check:
    """Build the fastest closure for one requirement; values were validated by the caller."""
    if operator in (OP_IN, OP_EQUALS):
        if len(values) == 1:
            only = values[0]
            # A missing key reads as None, which never equals a string.
            return lambda labels: labels.get(key) == only
        allowed = frozenset(values)
        return lambda labels: labels.get(key) in allowed
    if operator == OP_NOT_IN:
        if len(values) == 1:
            only = values[0]
            return lambda labels: labels.get(key) != only
        denied = frozenset(values)
        return lambda labels: labels.get(key) not in denied
    if operator == OP_EXISTS:
        return lambda labels: key in labels
    if operator == OP_DOES_NOT_EXIST:
        return lambda labels: key not in labels
    if operator in (OP_GT, OP_LT):
        bound = _parse_go_int64(values[0]) if len(values) == 1 else None
        if bound is None:  # pragma: no cover - rejected by validation before we get here
            return _never
        greater = operator == OP_GT

        def compare(labels: Labels) -> bool:
            raw = labels.get(key)
            if raw is None:
                return False
            # A label that is not an int64 never satisfies Gt/Lt (upstream logs and says no).
            number = _parse_go_int64(raw)
            if number is None:
                return False
            return number > bound if greater else number < bound

        return compare
    raise AssertionError(f"unknown operator {operator!r}")  # pragma: no cover


def _requirement(key: str, operator: str, values: tuple[str, ...]) -> Requirement:
    """Build a compiled requirement (values already validated)."""
    return Requirement(key, operator, values, _make_check(key, operator, values))


# --------------------------------------------------------------------- label selector


class LabelSelector:
    """A compiled ``metav1.LabelSelector``: requirements ANDed, or a match-nothing selector."""

    __slots__ = ("_checks", "_nothing", "requirements")

    def __init__(self, requirements: Sequence[Requirement], *, nothing: bool = False) -> None:
        """Wrap already compiled requirements; ``nothing=True`` builds the match-nothing selector."""
        self.requirements: tuple[Requirement, ...] = tuple(sorted(requirements, key=lambda r: r.key))
        self._nothing = nothing
        checks = tuple(r._check for r in self.requirements)
        self._checks: tuple[_Check, ...] = (_never,) if nothing else checks

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (upstream ``Selector.Empty``)."""
        return not self._nothing and not self.requirements

    @property
    def matches_nothing(self) -> bool:
        """True for the selector of a ``nil`` LabelSelector, which never matches."""
        return self._nothing

    def matches(self, labels: Labels) -> bool:
        """Return whether ``labels`` satisfy every requirement."""
        # A plain loop: measurably faster than all() over a generator on this hot path.
        for check in self._checks:  # noqa: SIM110
            if not check(labels):
                return False
        return True

    def __repr__(self) -> str:
        if self._nothing:
            return "LabelSelector(<nothing>)"
        return f"LabelSelector({list(self.requirements)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelector):
            return NotImplemented
        return self._nothing == other._nothing and self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash((self._nothing, self.requirements))


#: The selector of a ``nil`` LabelSelector: matches no labels.
NOTHING: Final = LabelSelector((), nothing=True)
#: The selector of an empty LabelSelector ``{}``: matches all labels.
EVERYTHING: Final = LabelSelector(())


def _expect_mapping(obj: object, path: str) -> Mapping[str, Any]:
    """Return ``obj`` as a mapping ({} for null) or raise a type error naming ``path``."""
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise SelectorError([f"{path}: expected an object, got {type(obj).__name__}"])
    return obj


def _expect_list(obj: object, path: str) -> Sequence[Any]:
    """Return ``obj`` as a list (empty for null) or raise a type error naming ``path``."""
    if obj is None:
        return ()
    if isinstance(obj, (str, bytes)) or not isinstance(obj, Sequence):
        raise SelectorError([f"{path}: expected a list, got {type(obj).__name__}"])
    return obj


def _expect_str(obj: object, path: str) -> str:
    """Return ``obj`` as a string ("" for null) or raise a type error naming ``path``."""
    if obj is None:
        return ""
    if not isinstance(obj, str):
        raise SelectorError([f"{path}: expected a string, got {type(obj).__name__}"])
    return obj


def _expect_values(obj: object, path: str) -> tuple[str, ...]:
    """Return a requirement's ``values`` as a tuple of strings."""
    return tuple(_expect_str(item, f"{path}[{index}]") for index, item in enumerate(_expect_list(obj, path)))


def compile_label_selector(sel: Mapping[str, Any] | None, *, path: str = "") -> LabelSelector:
    """Compile a ``metav1.LabelSelector`` dict (upstream ``LabelSelectorAsSelector``).

    ``None`` gives :data:`NOTHING`; a selector with neither ``matchLabels`` nor
    ``matchExpressions`` gives :data:`EVERYTHING`.  Raises :class:`SelectorError` for an
    invalid key or value, an operator other than In/NotIn/Exists/DoesNotExist, In/NotIn
    without values or Exists/DoesNotExist with values.  ``path`` prefixes error messages.
    """
    if sel is None:
        return NOTHING
    raw = _expect_mapping(sel, path or "selector")
    prefix = f"{path}." if path else ""
    match_labels = _expect_mapping(raw.get("matchLabels"), f"{prefix}matchLabels")
    expressions = _expect_list(raw.get("matchExpressions"), f"{prefix}matchExpressions")
    if not match_labels and not expressions:
        return EVERYTHING
    requirements: list[Requirement] = []
    for key, label_value in match_labels.items():
        key = _expect_str(key, f"{prefix}matchLabels")
        item = _expect_str(label_value, f"{prefix}matchLabels.{key}")
        errors = _requirement_errors(key, OP_EQUALS, (item,), f"{prefix}matchLabels.{key}.")
        if errors:
            raise SelectorError(errors)
        requirements.append(_requirement(key, OP_EQUALS, (item,)))
    for index, expr in enumerate(expressions):
        expr_path = f"{prefix}matchExpressions[{index}]"
        body = _expect_mapping(expr, expr_path)
        key = _expect_str(body.get("key"), f"{expr_path}.key")
        operator = _expect_str(body.get("operator"), f"{expr_path}.operator")
        values = _expect_values(body.get("values"), f"{expr_path}.values")
        if operator not in _LABEL_SELECTOR_OPS:
            raise SelectorError([f"{expr_path}.operator: {operator!r} is not a valid label selector operator"])
        errors = _requirement_errors(key, operator, values, f"{expr_path}.")
        if errors:
            raise SelectorError(errors)
        requirements.append(_requirement(key, operator, values))
    return LabelSelector(requirements)


# ---------------------------------------------------------------------- node selector


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """One compiled ``matchFields`` requirement: ``key`` ``In``/``NotIn`` a single ``value``."""

    key: str
    operator: str
    value: str


def _make_field_check(req: FieldRequirement) -> Callable[[str], bool]:
    """Build the check of one field requirement against a (non-empty) node name."""
    wanted = req.value
    if req.key != _OBJECT_NAME_FIELD:
        # Upstream's node field set only holds metadata.name; any other key reads as "".
        constant = (wanted == "") == (req.operator == OP_IN)
        return lambda _name: constant
    if req.operator == OP_IN:
        return lambda name: name == wanted
    return lambda name: name != wanted


class NodeSelectorTerm:
    """One compiled ``NodeSelectorTerm``: its label and field requirements ANDed.

    ``errors`` holds the term's parse errors; a term with errors never matches.
    """

    __slots__ = ("_field_checks", "_label_checks", "errors", "field_requirements", "label_requirements")

    def __init__(
        self,
        label_requirements: Sequence[Requirement],
        field_requirements: Sequence[FieldRequirement],
        errors: Sequence[str] = (),
    ) -> None:
        """Wrap compiled requirements; ``errors`` marks the term as unparseable."""
        self.label_requirements: tuple[Requirement, ...] = tuple(label_requirements)
        self.field_requirements: tuple[FieldRequirement, ...] = tuple(field_requirements)
        self.errors: tuple[str, ...] = tuple(errors)
        self._label_checks: tuple[_Check, ...] = tuple(r._check for r in self.label_requirements)
        self._field_checks: tuple[Callable[[str], bool], ...] = tuple(
            _make_field_check(req) for req in self.field_requirements
        )

    @property
    def valid(self) -> bool:
        """True when the term parsed without errors."""
        return not self.errors

    def matches(self, labels: Labels, name: str) -> bool:
        """Return whether a node with these labels and this name satisfies the term."""
        if self.errors:
            return False
        for check in self._label_checks:
            if not check(labels):
                return False
        # Upstream skips field requirements when the node has no name (empty field set).
        if name:
            for field_check in self._field_checks:
                if not field_check(name):
                    return False
        return True

    def __repr__(self) -> str:
        return (
            f"NodeSelectorTerm(labels={list(self.label_requirements)!r}, "
            f"fields={list(self.field_requirements)!r}, errors={list(self.errors)!r})"
        )


def _compile_term(term: object, path: str) -> NodeSelectorTerm | None:
    """Compile one ``NodeSelectorTerm`` dict; ``None`` for an empty term (which matches nothing)."""
    body = _expect_mapping(term, path)
    expressions = _expect_list(body.get("matchExpressions"), f"{path}.matchExpressions")
    fields = _expect_list(body.get("matchFields"), f"{path}.matchFields")
    if not expressions and not fields:
        return None
    errors: list[str] = []
    label_reqs: list[Requirement] = []
    for index, expr in enumerate(expressions):
        expr_path = f"{path}.matchExpressions[{index}]"
        raw = _expect_mapping(expr, expr_path)
        key = _expect_str(raw.get("key"), f"{expr_path}.key")
        operator = _expect_str(raw.get("operator"), f"{expr_path}.operator")
        values = _expect_values(raw.get("values"), f"{expr_path}.values")
        if operator not in _NODE_SELECTOR_OPS:
            supported = ", ".join(f'"{op}"' for op in _NODE_SELECTOR_OPS)
            errors.append(f'{expr_path}.operator: Unsupported value: "{operator}": supported values: {supported}')
            continue
        req_errors = _requirement_errors(key, operator, values, f"{expr_path}.")
        if req_errors:
            errors.extend(req_errors)
        else:
            label_reqs.append(_requirement(key, operator, values))
    field_reqs: list[FieldRequirement] = []
    for index, expr in enumerate(fields):
        expr_path = f"{path}.matchFields[{index}]"
        raw = _expect_mapping(expr, expr_path)
        key = _expect_str(raw.get("key"), f"{expr_path}.key")
        operator = _expect_str(raw.get("operator"), f"{expr_path}.operator")
        values = _expect_values(raw.get("values"), f"{expr_path}.values")
        if operator not in _FIELD_SELECTOR_OPS:
            supported = ", ".join(f'"{op}"' for op in _FIELD_SELECTOR_OPS)
            errors.append(f'{expr_path}.operator: Unsupported value: "{operator}": supported values: {supported}')
        elif len(values) != 1:
            errors.append(f"{expr_path}.values: Invalid value: {list(values)!r}: must have one element")
        else:
            field_reqs.append(FieldRequirement(key, operator, values[0]))
    if errors:
        return NodeSelectorTerm((), (), errors)
    return NodeSelectorTerm(sorted(label_reqs, key=lambda r: r.key), field_reqs)


class NodeSelector:
    """A compiled ``v1.NodeSelector``: terms ORed, with upstream's lazy error reporting."""

    __slots__ = ("_valid_terms", "errors", "terms")

    def __init__(self, terms: Sequence[NodeSelectorTerm]) -> None:
        """Wrap compiled, non-empty terms (empty terms were dropped: they match nothing)."""
        self.terms: tuple[NodeSelectorTerm, ...] = tuple(terms)
        self._valid_terms = tuple(term for term in self.terms if term.valid)
        self.errors: tuple[str, ...] = tuple(error for term in self.terms for error in term.errors)

    def matches(self, labels: Labels, name: str) -> bool:
        """Return whether any term matches the node (invalid terms never match)."""
        for term in self._valid_terms:  # noqa: SIM110 - hot path, see LabelSelector.matches
            if term.matches(labels, name):
                return True
        return False

    def match(self, labels: Labels, name: str) -> tuple[bool, tuple[str, ...]]:
        """Return ``(matched, errors)`` like upstream ``LazyErrorNodeSelector.Match``.

        Parse errors are returned only when no term matched.
        """
        if self.matches(labels, name):
            return True, ()
        return False, self.errors

    def __repr__(self) -> str:
        return f"NodeSelector({list(self.terms)!r})"


def _node_selector_terms(terms: Sequence[Mapping[str, Any]] | Mapping[str, Any] | None) -> Sequence[Any]:
    """Accept a ``v1.NodeSelector`` dict or a bare list of terms; return the terms."""
    if isinstance(terms, Mapping):
        return _expect_list(terms.get("nodeSelectorTerms"), "nodeSelectorTerms")
    return _expect_list(terms, "nodeSelectorTerms")


def compile_node_selector(
    terms: Sequence[Mapping[str, Any]] | Mapping[str, Any] | None, *, strict: bool = False
) -> NodeSelector:
    """Compile node selector terms (a ``v1.NodeSelector`` dict or its ``nodeSelectorTerms`` list).

    Terms are ORed, the requirements inside a term ANDed; a term without requirements
    matches nothing.  Invalid terms are kept as never-matching terms and their errors are
    exposed on :attr:`NodeSelector.errors` (upstream ``NewLazyErrorNodeSelector``); with
    ``strict=True`` any invalid term raises :class:`SelectorError` (``NewNodeSelector``).
    """
    compiled: list[NodeSelectorTerm] = []
    for index, term in enumerate(_node_selector_terms(terms)):
        # Upstream reports paths from "nodeSelectorTerms" whatever object holds the selector.
        parsed = _compile_term(term, f"nodeSelectorTerms[{index}]")
        if parsed is not None:
            compiled.append(parsed)
    selector = NodeSelector(compiled)
    if strict and selector.errors:
        raise SelectorError(selector.errors)
    return selector


class PreferredTerms:
    """Compiled ``preferredDuringSchedulingIgnoredDuringExecution`` node affinity terms."""

    __slots__ = ("terms",)

    def __init__(self, terms: Sequence[tuple[int, NodeSelectorTerm]]) -> None:
        """Wrap ``(weight, term)`` pairs; zero weights and empty terms were already dropped."""
        self.terms: tuple[tuple[int, NodeSelectorTerm], ...] = tuple(terms)

    def score(self, labels: Labels, name: str) -> int:
        """Return the sum of the weights of the terms the node matches (upstream ``Score``)."""
        total = 0
        for weight, term in self.terms:
            if term.matches(labels, name):
                total += weight
        return total

    def __bool__(self) -> bool:
        return bool(self.terms)

    def __repr__(self) -> str:
        return f"PreferredTerms({list(self.terms)!r})"


def compile_preferred_terms(terms: Sequence[Mapping[str, Any]] | None) -> PreferredTerms:
    """Compile ``PreferredSchedulingTerm`` dicts (upstream ``NewPreferredSchedulingTerms``).

    Terms with weight 0 or without requirements are skipped without being validated; any
    other invalid term raises :class:`SelectorError` listing every error.
    """
    compiled: list[tuple[int, NodeSelectorTerm]] = []
    errors: list[str] = []
    for index, item in enumerate(_expect_list(terms, "preferredDuringSchedulingIgnoredDuringExecution")):
        path = f"[{index}]"
        body = _expect_mapping(item, path)
        weight = body.get("weight", 0)
        if weight is None:
            weight = 0
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise SelectorError([f"{path}.weight: expected an integer, got {type(weight).__name__}"])
        if weight == 0:
            continue
        term = _compile_term(body.get("preference"), path)
        if term is None:
            continue
        if term.errors:
            errors.extend(term.errors)
        else:
            compiled.append((weight, term))
    if errors:
        raise SelectorError(errors)
    return PreferredTerms(compiled)


# -------------------------------------------------------------- required node affinity


class RequiredNodeAffinity:
    """A pod's ``spec.nodeSelector`` AND its required node affinity (upstream ``GetRequiredNodeAffinity``)."""

    __slots__ = ("_node_selector_checks", "affinity", "node_selector")

    def __init__(self, node_selector: Mapping[str, str], affinity: NodeSelector | None) -> None:
        """Wrap the pod's ``nodeSelector`` map and its compiled required affinity (``None`` if unset)."""
        self.node_selector: tuple[tuple[str, str], ...] = tuple(sorted(node_selector.items()))
        self.affinity = affinity
        self._node_selector_checks = tuple(_make_check(key, OP_EQUALS, (wanted,)) for key, wanted in self.node_selector)

    @property
    def empty(self) -> bool:
        """True when the pod constrains nothing (no nodeSelector and no required affinity)."""
        return not self.node_selector and self.affinity is None

    def matches(self, labels: Labels, name: str) -> bool:
        """Return whether the node satisfies both the nodeSelector and the required affinity."""
        for check in self._node_selector_checks:
            if not check(labels):
                return False
        return self.affinity is None or self.affinity.matches(labels, name)

    def match(self, labels: Labels, name: str) -> tuple[bool, tuple[str, ...]]:
        """Return ``(matched, errors)`` like upstream ``RequiredNodeAffinity.Match``."""
        for check in self._node_selector_checks:
            if not check(labels):
                return False, ()
        if self.affinity is None:
            return True, ()
        return self.affinity.match(labels, name)

    def __repr__(self) -> str:
        return f"RequiredNodeAffinity(node_selector={dict(self.node_selector)!r}, affinity={self.affinity!r})"


def compile_required_node_affinity(pod: Mapping[str, Any]) -> RequiredNodeAffinity:
    """Compile a pod's ``spec.nodeSelector`` and ``requiredDuringSchedulingIgnoredDuringExecution``.

    The nodeSelector is not validated (upstream ``SelectorFromSet``); the required affinity
    is compiled lazily (invalid terms never match).  A present but empty
    ``nodeSelectorTerms`` list matches no node, as upstream.
    """
    if not isinstance(pod, Mapping):
        raise SelectorError([f"pod: expected an object, got {type(pod).__name__}"])
    spec = _expect_mapping(pod.get("spec"), "spec")
    selector_map = _expect_mapping(spec.get("nodeSelector"), "spec.nodeSelector")
    node_selector = {
        _expect_str(key, "spec.nodeSelector"): _expect_str(wanted, f"spec.nodeSelector.{key}")
        for key, wanted in selector_map.items()
    }
    affinity = _expect_mapping(spec.get("affinity"), "spec.affinity")
    node_affinity = _expect_mapping(affinity.get("nodeAffinity"), "spec.affinity.nodeAffinity")
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    compiled = None
    if required is not None:
        path = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        compiled = compile_node_selector(_expect_mapping(required, path))
    return RequiredNodeAffinity(node_selector, compiled)
