"""CEL device selectors, compiled and evaluated as upstream's ``dynamic-resource-allocation/cel`` does.

The runtime is ``cel-expr-python`` (the CEL C++ implementation). Measured on a typical selector (a
driver check and two attribute comparisons): ``cel-python`` (pure Python) takes ~1 ms per
evaluation; ``common-expression-language`` (Rust) ~30 us but has no type checker and cannot carry
quantity or semver values; ``cel-expr-python`` ~15 us, with a checker whose errors have cel-go's
format (``ERROR: <input>:1:5: Syntax error: ...`` with the source line and a caret). Kubernetes' CEL
libraries that the runtime lacks are added by :mod:`extender.dra.cel_library` (quantity, semver,
regex ``find``/``findAll``, lists, sets, IP, CIDR).

The ``device`` variable has upstream's shape: ``driver``, ``allowMultipleAllocations``,
``attributes`` and ``capacity``, the last two maps of domain to map of name to value. A name
without a domain belongs to the driver's domain, so ``device.attributes["gpu.example.com"].model``
reads ``model`` of a ``gpu.example.com`` device. Looking up a domain the device does not have
gives an empty map (upstream's default map), so ``"x" in device.attributes["other.com"]`` is false.
Attribute values are ``int``, ``bool``, ``string`` or a semver (``version``); capacities are
quantities.

Interface: ``CelCache().get_or_compile(expression)`` returns a :class:`CompiledExpression` (one per
distinct expression, kept); ``compiled.error`` is upstream's compile error text or None;
``compiled.device_matches(device_record, driver)`` returns ``(matches, runtime_error_text)``, cached
per device (selectors are pure functions of the device).

The device's fields are declared to the checker as qualified variables (``device.driver``...), so
their types are checked as cel-go checks them. Known differences from cel-go: a bare ``device``
(not followed by a field) is an undeclared reference; cel-go's runtime cost limit is approximated
by the C++ runtime's comprehension budget (10,000 iterations per evaluation; same error text);
regular expressions use Python's ``re``; the format library (it returns optionals, which Python
functions cannot), two-variable comprehensions and ``format``'s quoting of strings inside lists are
missing, and ``asInteger`` follows the value rather than Go's representation
(``tests/unit/dra/test_cel_parity.py`` lists every difference found against upstream).

What cel-go does beyond the runtime is added around it: the validators Kubernetes' environment enables
(duration and timestamp literals, mixed list and map literals) run after a clean check; a conversion
of a literal that fails fails the program, as cel-go's planner folds it; functions the runtime
declares itself and a Kubernetes library adds overloads to (list ``indexOf``/``lastIndexOf``,
``string`` of an IP or CIDR) are renamed to same-length aliases where the checker finds no overload;
a call with an argument count no overload takes is reported with its argument types, as cel-go does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from cel_expr_python import cel

from extender.dra import cel_library
from extender.dra.records import DeviceRecord

__all__ = ["CelCache", "CompiledExpression"]

#: Compiled expressions kept (distinct expressions are few: a handful of classes and claims).
MAX_EXPRESSIONS: Final = 4096
#: Device results kept per expression before the memo is cleared.
MAX_DEVICE_RESULTS: Final = 200_000

_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r" \[[A-Z_]+\]$")
_STRING_LITERAL = re.compile(r"""[rR]?("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")
#: ``device.attributes["domain"]`` / ``device.capacity['domain']``: a domain looked up by a literal.
_DOMAIN_LOOKUP = re.compile(r"""\bdevice\s*\.\s*(?:attributes|capacity)\s*(\[)\s*("[^"\\\n]*"|'[^'\\\n]*')\s*(\])""")
#: ``device.<field>``.
_DEVICE_FIELD = re.compile(r"\bdevice\s*(\.)\s*([A-Za-z_][A-Za-z0-9_]*)")
_DEVICE_FIELDS: Final = frozenset({"driver", "allowMultipleAllocations", "attributes", "capacity"})
#: ``.matches("re")``, ``.find("re")``, ``.findAll("re"...)`` with a literal pattern (checked when compiling).
_REGEX_CALL = re.compile(r"""\b(matches|find|findAll)\s*\(\s*(?:[^,()]*?,\s*)?([rR]?("[^"\n]*"|'[^'\n]*'))""")
# A type conversion of one literal (not a member call): string, bytes, number, bool or null.
_CONVERSION_CALL = re.compile(
    r"(?<![\w.])(int|uint|double|bool|string|bytes|duration|timestamp)\s*\(\s*"
    r"""((?:[rR]|[bB][rR]?|[rR][bB])?(?:"[^"\n]*"|'[^'\n]*')|-?(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)[uU]?"""
    r"|true|false|null)\s*\)")
# A literal, a nested list or map literal, or a call of a global function on such arguments.
_ELEMENT_SHAPE = re.compile(r"""(?:[rRbB]{0,2}(?:"[^"\n]*"|'[^'\n]*')|-?[0-9][0-9a-fA-FxX.eE+-]*[uU]?|true|false|null"""
                            r"|\[.*\]|\{.*\}|[A-Za-z_][\w.]*\(.*\))", re.DOTALL)
_IN_OPERATOR = re.compile(r"(?<![\w.])in$")
_FORMAT_CALL = re.compile(r"\bformat\s*\(")
_STRING_PREFIX = re.compile(r"(?<![\w.])[rRbB]{1,2}(?=[\"'])")
_GLOBAL_CALL = re.compile(r"[A-Za-z_][\w.]*\(.*\)", re.DOTALL)
_IDENTIFIER = re.compile(r"(?<![\w.\"'])[A-Za-z_]\w*\b(?!\s*\()")
_CONVERSION_TARGETS: Final[Mapping[str, str]] = {"duration": "google.protobuf.Duration",
                                                 "timestamp": "google.protobuf.Timestamp"}
_UNDECLARED_CALL = re.compile(r"ERROR: <input>:(\d+):(\d+): undeclared reference to '([\w.]+)' \(in container ''\)")
_ALIASED_CALL_ERROR = re.compile(
    r"ERROR: <input>:(\d+):(\d+): found no matching overload for '(indexOf|lastIndexOf|string)' applied to '\((.*)\)'")
_CALL_ERROR = re.compile(r"ERROR: <input>:(\d+):(\d+): found no matching overload for '([^']+)' applied to '\((.*)\)'")


def _strip_status(text: str) -> str:
    """``INVALID_ARGUMENT: ERROR: ... [INVALID_ARGUMENT]`` -> ``ERROR: ...`` (cel-go's text)."""
    return _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", text, count=1))


def _runtime_error_text(text: str) -> str:
    """Translate the C++ runtime's error texts to cel-go's where they differ."""
    text = _strip_status(text)
    if text.startswith("Key not found in map : "):
        key = text[len("Key not found in map : ") :]
        if len(key) >= 2 and key[0] == key[-1] == '"':
            key = key[1:-1]
        return f"no such key: {key}"
    if text.startswith("No matching overloads found"):
        return "no such overload"
    if text == "divide by zero":
        return "division by zero"
    if text == "Iteration budget exceeded":
        # The C++ runtime's comprehension budget stands in for cel-go's runtime cost limit.
        return "operation cancelled: actual cost limit exceeded"
    index_error = re.fullmatch(r"Index error: index=(-?\d+) size=\d+", text)
    if index_error:
        return f"index out of bounds: {index_error.group(1)}"
    return text


def _blank_strings(expression: str) -> str:
    """The expression with the contents of string literals blanked (positions kept)."""
    return _STRING_LITERAL.sub(lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1], expression)


def _with_default_domains(expression: str) -> str:
    """The expression with ``device.attributes["d"]`` written ``device.attributes[?"d"].orValue({})``.

    Upstream's attribute and capacity maps answer a domain the device does not have with an empty
    map (while ``"d" in device.attributes`` stays false); optional indexing says the same in CEL.
    """
    blanked = _blank_strings(expression)
    pieces, last = [], 0
    for match in _DOMAIN_LOOKUP.finditer(blanked):
        start = match.start()
        if start > 0 and (expression[start - 1] in "._" or expression[start - 1].isalnum()):
            continue
        pieces.append(expression[last : match.start(1)])
        pieces.append("[?" + expression[match.start(2) : match.end(2)] + "].orValue({})")
        last = match.end(3)
    pieces.append(expression[last:])
    return "".join(pieces)


def _location(expression: str, offset: int) -> tuple[int, int]:
    """1-based line and column of an offset."""
    line_start = expression.rfind("\n", 0, offset) + 1
    return expression.count("\n", 0, offset) + 1, offset - line_start + 1


def _check_error(expression: str, line: int, column: int, message: str) -> str:
    """An error in cel-go's format: position, message, source line and caret."""
    source = expression.split("\n")[line - 1] if expression else ""
    return f"ERROR: <input>:{line}:{column}: {message}\n | {source}\n | {'.' * (column - 1)}^"


def _undefined_device_fields(expression: str) -> list[str]:
    """cel-go's check errors for ``device.<field>`` with a field the device type does not have."""
    errors = []
    for match in _DEVICE_FIELD.finditer(_blank_strings(expression)):
        start = match.start()
        if start > 0 and (expression[start - 1] in "._" or expression[start - 1].isalnum()):
            continue
        if match.group(2) not in _DEVICE_FIELDS:
            line, column = _location(expression, match.start(1))
            errors.append(_check_error(expression, line, column, f"undefined field '{match.group(2)}'"))
    return errors


def _regex_literal_error(expression: str) -> str | None:
    """cel-go's errors for invalid literal patterns: ``matches`` when checking, ``find``/``findAll`` when planning."""
    blanked = _blank_strings(expression)
    for match in _REGEX_CALL.finditer(blanked):
        function, start, end = match.group(1), match.start(2), match.end(2)
        literal = expression[start:end]
        raw = literal[0] in "rR"
        body = literal[2:-1] if raw else literal[1:-1]
        if "\\" in body and not raw:
            continue  # escapes: left to the runtime
        try:
            re.compile(body)
        except re.error as err:
            if function == "matches":
                line, column = _location(expression, start)
                return "compilation failed: " + _check_error(expression, line, column, "invalid matches argument")
            return "program instantiation failed: " + cel_library.go_regexp_error(body, err)
    return None


def _conversion_fails(env: Any, function: str, literal: str) -> bool:
    """Whether converting one literal fails (False when the checker has no such conversion)."""
    try:
        result = env.compile(f"{function}({literal})").eval()
    except Exception as err:
        return "No matching overloads" not in str(err)
    return bool(result.type() == cel.Type.ERROR)


def _validator_errors(env: Any, expression: str) -> list[tuple[int, str]]:
    """The errors of cel-go's AST validators that Kubernetes' environment enables (after a clean check):
    duration and timestamp literals that do not convert, and list and map literals whose elements (or
    keys, or values) are not all of one type. As (offset, message), in cel-go's order (by position)."""
    errors = _time_literal_errors(env, expression) + _mixed_literal_errors(env, expression)
    return sorted(errors, key=lambda error: _location(expression, error[0]))


def _time_literal_errors(env: Any, expression: str) -> list[tuple[int, str]]:
    errors = []
    blanked = _blank_strings(expression)
    for match in _CONVERSION_CALL.finditer(blanked):
        function = match.group(1)
        if function in ("duration", "timestamp") and _conversion_fails(
                env, function, expression[match.start(2):match.end(2)]):
            errors.append((match.start(2), f"invalid {function} argument"))
    return errors


def _mixed_literal_errors(env: Any, expression: str) -> list[tuple[int, str]]:
    """Mixed list and map literals. Only literals whose every element can be typed on its own (no
    variable, no comprehension variable) and located as cel-go locates it are checked."""
    blanked = _blank_strings(expression)
    errors: list[tuple[int, str]] = []
    # Literals anywhere inside a string format call are exempt (its arguments are a mixed list).
    exempt = [(m.end() - 1, _closing(blanked, m.end() - 1) or len(blanked)) for m in _FORMAT_CALL.finditer(blanked)]
    for opening, parts in _aggregate_literals(blanked):
        if any(start < parts[0][0] <= end for start, end in exempt):
            continue
        if opening == "[":
            typed = [_element_type(env, expression, blanked, start, end) for start, end in parts]
            if any(t is None for t in typed):
                continue
            first = typed[0]
            for element in typed[1:]:
                assert first is not None and element is not None
                if element[1] != first[1]:
                    errors.append((element[0], f"expected type '{first[1]}' but found '{element[1]}'"))
                    break
            continue
        entries = []
        for start, end in parts:
            colon = _top_level(blanked, start, end, ":")
            if colon is None:
                break
            key = _element_type(env, expression, blanked, start, colon)
            value = _element_type(env, expression, blanked, colon + 1, end)
            if key is None or value is None:
                break
            entries.append((key, value))
        else:
            if not entries:
                continue
            (_, key_type), (_, value_type) = entries[0]
            for key, value in entries[1:]:
                if key[1] != key_type:
                    errors.append((key[0], f"expected type '{key_type}' but found '{key[1]}'"))
                if value[1] != value_type:
                    errors.append((value[0], f"expected type '{value_type}' but found '{value[1]}'"))
    return errors


def _aggregate_literals(blanked: str) -> list[tuple[str, list[tuple[int, int]]]]:
    """List and map literals (not indexing, not message construction): the opening bracket and the
    spans of their top-level comma-separated parts (a trailing comma leaves no part)."""
    out = []
    for i, ch in enumerate(blanked):
        if ch not in "[{":
            continue
        before = blanked[:i].rstrip()
        follows_value = before and (before[-1].isalnum() or before[-1] in "_)].}" or (ch == "[" and before[-1] == "?"))
        if follows_value and not _IN_OPERATOR.search(before):
            continue  # an index or a message construction, not a literal
        close = _closing(blanked, i)
        if close is None:
            continue
        parts = []
        start = i + 1
        depth = 0
        for j in range(i + 1, close + 1):
            c = blanked[j]
            if c in "([{":
                depth += 1
            elif c in ")]}" and depth:
                depth -= 1
            elif (c == "," and depth == 0) or j == close:
                if blanked[start:j].strip():
                    parts.append((start, j))
                start = j + 1
        if parts:
            out.append((ch, parts))
    return out


def _closing(blanked: str, opening: int) -> int | None:
    depth = 0
    for j in range(opening, len(blanked)):
        if blanked[j] in "([{":
            depth += 1
        elif blanked[j] in ")]}":
            depth -= 1
            if depth == 0:
                return j
    return None


def _top_level_positions(blanked: str, start: int, end: int, wanted: str) -> Iterator[int]:
    """Positions of ``wanted`` in ``blanked[start:end]`` outside any brackets."""
    depth = 0
    for j in range(start, end):
        c = blanked[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == wanted and depth == 0:
            yield j


def _top_level(blanked: str, start: int, end: int, wanted: str) -> int | None:
    return next(_top_level_positions(blanked, start, end, wanted), None)


def _element_type(env: Any, expression: str, blanked: str, start: int, end: int) -> tuple[int, str] | None:
    """(where cel-go locates the element, its type name), or None when it cannot be told here: the
    element reads a variable, is optional or empty, or is an expression whose location is an operator."""
    text = blanked[start:end]
    offset = start + len(text) - len(text.lstrip())
    body = text.strip()
    if not body or body.startswith("?") or body in ("[]", "{}") or _ELEMENT_SHAPE.fullmatch(body) is None:
        return None
    names = set(_IDENTIFIER.findall(_STRING_PREFIX.sub(" ", body))) - {"true", "false", "null"}
    if names:
        return None
    try:
        program = env.compile(expression[offset:offset + len(body)])
    except Exception:
        return None
    if _GLOBAL_CALL.fullmatch(body):
        offset += body.index("(")  # cel-go locates a call at its parenthesis
    return offset, _go_type_name(str(program.return_type().name()))


def _constant_conversion_error(env: Any, expression: str) -> str | None:
    """cel-go's planner (OptOptimize, which Kubernetes' environment sets) evaluates a type conversion of
    a literal when it builds the program: one that fails fails the program, not the evaluation."""
    blanked = _blank_strings(expression)
    for match in _CONVERSION_CALL.finditer(blanked):
        function = match.group(1)
        literal = expression[match.start(2):match.end(2)]
        if not _conversion_fails(env, function, literal):
            continue
        if literal.lstrip("rR")[:1] in "\"'":
            message = f"type conversion error from 'string' to '{_CONVERSION_TARGETS.get(function, function)}'"
        elif literal[:1] in "bB":
            message = "invalid UTF-8 in bytes, cannot convert to string"
        else:
            message = {"uint": "unsigned integer overflow", "timestamp": "timestamp overflow"}.get(
                function, "integer overflow")
        return "program instantiation failed: " + message
    return None


def _split_types(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def _arity_errors(expression: str, message: str, list_attributes: bool) -> str:
    """The C++ checker reports a call of a declared function with an argument count it has no overload
    for as an undeclared reference; cel-go as no matching overload, with the argument types (told here
    by checking each argument on its own; left as it is when one cannot be)."""
    env = cel_library.environment()
    attribute_type = "dyn" if list_attributes else "any"
    blanked = _blank_strings(expression)

    def rewrite(match: re.Match[str]) -> str:
        line, column, name = int(match.group(1)), int(match.group(2)), match.group(3)
        offset = sum(len(text) + 1 for text in expression.split("\n")[: line - 1]) + column - 1
        close = _closing(blanked, offset) if blanked[offset:offset + 1] == "(" else None
        if name not in cel_library.declared_functions() or close is None:
            return match.group(0)
        spans = _top_level_parts(blanked, offset + 1, close)
        start = offset - len(name)
        before = blanked[:start].rstrip()
        if before.endswith("."):
            receiver = _receiver_start(blanked, len(before) - 1)
            if receiver is None:
                return match.group(0)
            spans.insert(0, (receiver, len(before) - 1))
        types = []
        for begin, end in spans:
            try:
                program = env.compile(expression[begin:end])
            except Exception:
                return match.group(0)
            kind = _go_type_name(str(program.return_type().name()))
            # An attribute's value has cel-go's any type before v1.37 (declared as dyn here).
            attribute = re.match(r"device\s*\.\s*attributes\b", expression[begin:end].strip())
            types.append(attribute_type if kind == "dyn" and attribute else kind)
        return (f"ERROR: <input>:{line}:{column}: found no matching overload for '{name}' applied to "
                f"'({', '.join(types)})'")

    return _UNDECLARED_CALL.sub(rewrite, message)


def _top_level_parts(blanked: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the comma-separated parts of ``blanked[start:end]`` outside brackets."""
    parts: list[tuple[int, int]] = []
    begin = start
    for comma in _top_level_positions(blanked, start, end, ","):
        parts.append((begin, comma))
        begin = comma + 1
    if blanked[begin:end].strip():
        parts.append((begin, end))
    return parts


def _receiver_start(blanked: str, dot: int) -> int | None:
    """Where the receiver of a member call whose ``.`` is at ``dot`` begins (names, selections, calls,
    indexes and literals); None when it cannot be told."""
    j = dot - 1
    while j >= 0 and blanked[j] == " ":
        j -= 1
    start = None
    while j >= 0:
        c = blanked[j]
        if c in ")]}":
            depth = 0
            while j >= 0:
                depth += blanked[j] in ")]}"
                depth -= blanked[j] in "([{"
                if depth == 0:
                    break
                j -= 1
            if j < 0:
                return None
        elif c in "\"'":
            j = blanked.rfind(c, 0, j)
            if j < 0:
                return None
        elif not (c.isalnum() or c in "_."):
            break
        start = j
        j -= 1
    return start


def _member_call_format(expression: str, message: str) -> str:
    """cel-go prints member calls as ``'target.(args)'``; the C++ checker as ``'(target, args)'``."""

    def rewrite(match: re.Match[str]) -> str:
        line, column, name, args = int(match.group(1)), int(match.group(2)), match.group(3), match.group(4)
        source = expression.split("\n")[line - 1]
        before = source[: max(column - 1 - len(name), 0)].rstrip()
        types = _split_types(args)
        if not before.endswith(".") or not types:
            return match.group(0)
        call = f"{types[0]}.({', '.join(types[1:])})"
        return f"ERROR: <input>:{line}:{column}: found no matching overload for '{name}' applied to '{call}'"

    return _CALL_ERROR.sub(rewrite, message)


def _compile_with_aliases(env: Any, expression: str) -> tuple[str, Any]:
    """Compile, renaming each call the checker finds no overload for that a Kubernetes library declares
    under an alias (``indexOf``/``lastIndexOf`` of a list, ``string`` of an IP or CIDR: see
    ``cel_library.CALL_ALIASES``); returns the text compiled and the program."""
    text = expression
    while True:
        try:
            return text, env.compile(text)
        except Exception as err:
            renamed = _rename_aliased_calls(text, str(err))
            if renamed == text:
                raise
            text = renamed


def _rename_aliased_calls(text: str, message: str) -> str:
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    for line_no, column, name, types in _ALIASED_CALL_ERROR.findall(message):
        arguments = _split_types(types)
        if name == "string":
            if arguments not in (["net.IP"], ["net.CIDR"]):
                continue
        elif len(arguments) != 2 or not arguments[0].startswith("list("):
            continue  # the list functions take one argument: the checker's error stands
        paren = starts[int(line_no) - 1] + int(column) - 1  # the checker points at the call's "("
        begin = paren - len(name)
        if begin >= 0 and text[begin:paren] == name and text[paren:paren + 1] == "(":
            text = text[:begin] + cel_library.CALL_ALIASES[name] + text[paren:]
    return text


def _unalias(message: str) -> str:
    """An error text with the aliases named as written (same lengths: carets stay in place)."""
    for name, alias in cel_library.CALL_ALIASES.items():
        message = message.replace(alias, name)
    return message


class CompiledExpression:
    """One compiled selector: ``error`` (compile error text) or a program to evaluate per device."""

    __slots__ = ("_program", "_results", "error", "expression", "list_attributes")

    def __init__(self, expression: str, program: Any, error: str | None) -> None:
        self.expression = expression
        self._program = program
        self.error = error
        self._results: dict[int, tuple[DeviceRecord, bool, str | None]] = {}
        self.list_attributes = True  # see cel_library.device_variable; set by the cache that compiled it

    def device_matches(self, device: DeviceRecord, driver: str) -> tuple[bool, str | None]:
        """Evaluate for a device of a driver: ``(matches, None)`` or ``(False, runtime error text)``."""
        memo = self._results.get(id(device))
        if memo is not None and memo[0] is device:
            return memo[1], memo[2]
        matches, error = self._evaluate(device, driver)
        if len(self._results) >= MAX_DEVICE_RESULTS:
            self._results.clear()
        self._results[id(device)] = (device, matches, error)
        return matches, error

    def _evaluate(self, device: DeviceRecord, driver: str) -> tuple[bool, str | None]:
        if self._program is None:
            return False, self.error
        activation = cel_library.device_activation(device, driver, self.list_attributes)
        if isinstance(activation, str):
            return False, activation
        try:
            result = self._program.eval(activation)
        except Exception as err:  # the runtime raises for errors found while evaluating
            return False, _runtime_error_text(str(err))
        if result.type() == cel.Type.ERROR:
            return False, _runtime_error_text(str(result.value()))
        value = result.value()
        if not isinstance(value, bool):
            kind = _go_type_name(str(result.type().name())).split("(", 1)[0]
            reason = _BOOL_CONVERSION_ERRORS.get(kind, f"unsupported native conversion from {kind} to 'bool'")
            return False, f"CEL result of type {kind} could not be converted to bool: {reason}"
        return value, None


#: cel-go's ConvertToNative(bool) error of a value of each kind (common/types: string.go, int.go, uint.go,
#: double.go, bytes.go, list.go, map.go, null.go, duration.go, timestamp.go). A list result is possible from
#: v1.37 (attributes of list type).
_BOOL_CONVERSION_ERRORS: Final[Mapping[str, str]] = {
    "string": "unsupported native conversion from string to 'bool'",
    "int": "unsupported type conversion from 'int' to bool",
    "uint": "unsupported type conversion from 'uint' to bool",
    "double": "type conversion error from Double to 'bool'",
    "bytes": "type conversion error from Bytes to 'bool'",
    "list": "type conversion error from list to 'bool'",
    "map": "type conversion error from map to 'bool'",
    "null_type": "type conversion error from 'null_type' to 'bool'",
    "google.protobuf.Duration": "type conversion error from 'Duration' to 'bool'",
    "google.protobuf.Timestamp": "type conversion error from 'Timestamp' to 'bool'",
}


class CelCache:
    """Compiles each distinct expression once (upstream ``cel.Cache`` + ``GetCompiler().CompileCELExpression``)."""

    def __init__(self, *, list_attributes: bool = True) -> None:
        """Create an empty cache; the CEL environment is shared by all caches. ``list_attributes``: whether a
        list-typed attribute reaches an expression as a list (see :func:`cel_library.device_variable`)."""
        self._compiled: dict[str, CompiledExpression] = {}
        self.list_attributes = list_attributes

    def get_or_compile(self, expression: str) -> CompiledExpression:
        """The compiled expression, compiling it on first use."""
        compiled = self._compiled.get(expression)
        if compiled is None:
            compiled = compile_expression(expression, list_attributes=self.list_attributes)
            compiled.list_attributes = self.list_attributes
            if len(self._compiled) >= MAX_EXPRESSIONS:
                self._compiled.pop(next(iter(self._compiled)))
            self._compiled[expression] = compiled
        return compiled


_QUOTED: Final = r"""(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
_ACCESSOR: Final = rf"(?:\.\s*[A-Za-z_]\w*|\[\s*{_QUOTED}\s*\])"
#: An attribute's value: ``device.attributes["domain"].name`` (or ``["name"]``); the last accessor is captured.
_ATTRIBUTE_VALUE: Final = re.compile(
    rf"device\s*\.\s*attributes\s*\[\s*{_QUOTED}\s*\]\s*(?P<last>{_ACCESSOR})")
#: What has cel-go's dyn type rather than any: an index into an attribute's value, or a dyn() call.
_DYN_RESULT: Final = re.compile(rf"{_ATTRIBUTE_VALUE.pattern}(?:\s*\[[^\[\]]*\])+|dyn\s*\(.*\)", re.DOTALL)
_COMPREHENSION: Final = re.compile(
    rf"(?P<range>{_ATTRIBUTE_VALUE.pattern})\s*\.\s*(?:all|exists|exists_one|map|filter)\s*\(")


def _unwrap(expression: str) -> str:
    """The expression without surrounding whitespace and redundant outer parentheses."""
    text = expression.strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in _blank_strings(text):
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0


def _any_range_errors(expression: str) -> list[str]:
    """Before v1.37, cel-go's checker refuses a comprehension (all, exists, ...) over an attribute's value, whose
    type is any; the error points at the value's last accessor."""
    errors = []
    for match in _COMPREHENSION.finditer(expression):
        offset = match.start("last")
        errors.append(_check_error(expression, *_location(expression, offset),
                                   "expression of type 'any' cannot be range of a comprehension "
                                   "(must be list, map, or dynamic)"))
    return errors


def compile_expression(expression: str, *, list_attributes: bool = True) -> CompiledExpression:
    """Compile and check one selector, with upstream's error texts for bad expressions.

    ``list_attributes``: the environment of v1.37's scheduler (and of v1.36's with DRAListTypeAttributes), whose
    attribute values have cel-go's dyn type; v1.36's default environment gives them the any type, which its
    error texts print as "any" (and a domain's map of them as ``map(string, google.protobuf.Any)``).
    """
    attribute_type = "dyn" if list_attributes else "any"
    env = cel_library.environment()
    undefined = _undefined_device_fields(expression)
    if undefined:
        return CompiledExpression(expression, None, "compilation failed: " + "\n".join(undefined))
    try:
        checked, program = _compile_with_aliases(env, expression)
    except Exception as err:  # cel-expr-python raises for parse and check errors
        message = _member_call_format(
            expression, _arity_errors(expression, _strip_status(_unalias(str(err))), list_attributes))
        message = message.replace("map(string, map(string, dyn))", f"map(string, map(string, {attribute_type}))")
        return CompiledExpression(expression, None, "compilation failed: " + message)
    if not list_attributes:
        ranges = _any_range_errors(expression)
        if ranges:
            return CompiledExpression(expression, None, "compilation failed: " + "\n".join(ranges))
    validation = _validator_errors(env, expression)
    if validation:
        return CompiledExpression(expression, None, "compilation failed: " + "\n".join(
            _check_error(expression, *_location(expression, offset), message) for offset, message in validation))
    regex_error = _regex_literal_error(expression)
    if regex_error is not None:
        return CompiledExpression(expression, None, regex_error)
    output = program.return_type()
    if output == cel.Type.DYN and not list_attributes and _DYN_RESULT.fullmatch(_unwrap(expression)):
        # Before v1.37 an attribute's value has the any type, which a selector may return; an index into it, or a
        # dyn() call, has cel-go's dyn type, which it may not.
        return CompiledExpression(expression, None, "must evaluate to bool or the unknown type, not dyn")
    if output not in (cel.Type.BOOL, cel.Type.DYN):
        # An attribute domain's map has values of cel-go's any type (before v1.37), printed as google.protobuf.Any.
        name = _go_type_name(str(output.name()))
        if not list_attributes:
            name = name.replace("map(string, dyn)", "map(string, google.protobuf.Any)")
        return CompiledExpression(expression, None, f"must evaluate to bool or the unknown type, not {name}")
    folded = _constant_conversion_error(env, expression)
    if folded is not None:
        return CompiledExpression(expression, None, folded)
    evaluated = _with_default_domains(checked)
    if evaluated != checked:
        # Checked as written (errors point into the user's text); evaluated with default domains.
        program = env.compile(evaluated)
    return CompiledExpression(expression, program, None)


_GO_TYPE_NAMES: Final[Mapping[str, str]] = {
    "NULL": "null_type",
    "TIMESTAMP": "google.protobuf.Timestamp",
    "DURATION": "google.protobuf.Duration",
}


def _go_type_name(name: str) -> str:
    """cel-go's name of a type the C++ runtime names ``LIST<MAP<STRING, INT>>``: ``list(map(string, int))``."""
    out = []
    for token in re.split(r"([<>, ]+)", name):
        if not token.strip(" ,<>"):
            out.append(token.replace("<", "(").replace(">", ")"))
        elif token.isupper():
            out.append(_GO_TYPE_NAMES.get(token, token.lower()))
        else:
            out.append(token)
    return "".join(out)
