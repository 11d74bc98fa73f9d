"""A task's `triggerPolicy.condition`: the CEL subset TFX's Kubeflow V2 compiler writes.

The backend's driver (driver.Container) evaluates the condition with cel-go
(backend/src/v2/expression, Expr.Condition) on the task's ExecutorInput before
its outputs are provisioned, so a condition sees `inputs` only: input
artifacts as MLMD returns them (name = id, uri, metadata = the producer's
properties and custom properties, numbers as doubles) and input parameter
values. A false result skips the task; an evaluation error fails it.

TFX's compiler_utils.placeholder_to_cel writes comparisons (==, <, >), !, &&,
||, `+`, `.metadata['k']`, `.uri`, `[0]` and number or string literals; this
module parses that subset (with !=, <=, >=, true, false and null) and refuses
anything else before the run starts. cel-python was the alternative: it brings
google-re2, pendulum and jmespath into a fully pinned stack for a dozen
operators. The semantics follow cel-go 0.18 (KFP 2.4's): `==` across types
is false, ordering across types is an error, and && / || absorb an error when
the other side decides.
"""
import re
from typing import Any, Dict, List, Tuple

from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2 as pb

from pipeline.errors import UsageError

_TOKEN = re.compile(r"""\s*(?:
    (?P<num>\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?|\d+)
  | (?P<str>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||[<>!+.\[\]()-]))""", re.VERBOSE)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}
_RELATIONS = ("==", "!=", "<", "<=", ">", ">=")
_WORDS = {"true": True, "false": False, "null": None}


class ConditionError(Exception):
    """The condition could not be evaluated on these inputs (the driver fails the task)."""


def _tokens(text: str) -> List[Tuple[str, str, int]]:
    tokens, position = [], 0
    while text[position:].strip():
        match = _TOKEN.match(text, position)
        if not match:
            raise _unsupported(text, position)
        kind = match.lastgroup
        tokens.append((kind, match.group(kind), match.start(kind)))
        position = match.end()
    return tokens + [("end", "", len(text))]


def _unsupported(text: str, position: int) -> UsageError:
    return UsageError(f"trigger condition {text!r}: unsupported at character {position} "
                      f"({text[position:position + 12]!r}); this emulator evaluates the CEL "
                      "that TFX's Kubeflow V2 compiler writes (comparisons, !, &&, ||, +, "
                      "member and index access, number and string literals)")


class _Parser:
    """Recursive descent over CEL's precedence: || < && < relations < + < unary < member."""

    def __init__(self, text: str):
        self.text, self.tokens, self.at = text, _tokens(text), 0

    def parse(self):
        tree = self._binary(0)
        self._expect("end")
        return tree

    def _peek(self) -> Tuple[str, str, int]:
        return self.tokens[self.at]

    def _take(self) -> Tuple[str, str, int]:
        self.at += 1
        return self.tokens[self.at - 1]

    def _expect(self, value: str) -> None:
        kind, text, position = self._take()
        if (kind == "end" and value != "end") or (kind != "end" and text != value):
            raise _unsupported(self.text, position)

    _LEVELS = (("||",), ("&&",), _RELATIONS, ("+",))

    def _binary(self, level: int):
        if level == len(self._LEVELS):
            return self._unary()
        tree = self._binary(level + 1)
        while self._peek()[0] == "op" and self._peek()[1] in self._LEVELS[level]:
            operator = self._take()[1]
            tree = (operator, tree, self._binary(level + 1))
        return tree

    def _unary(self):
        kind, text, _ = self._peek()
        if kind == "op" and text in ("!", "-"):
            self._take()
            return (text + "unary", self._unary())
        return self._member(self._primary())

    def _member(self, tree):
        while self._peek()[1] in (".", "["):
            if self._take()[1] == ".":
                kind, name, position = self._take()
                if kind != "ident" or self._peek()[1] == "(":
                    raise _unsupported(self.text, position)
                tree = ("index", tree, ("literal", name))
            else:
                tree = ("index", tree, self._binary(0))
                self._expect("]")
        return tree

    def _primary(self):
        kind, text, position = self._take()
        if kind == "op" and text == "(":
            tree = self._binary(0)
            self._expect(")")
            return tree
        if kind == "num":
            return ("literal", float(text) if re.search(r"[.eE]", text) else int(text))
        if kind == "str":
            return ("literal", re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)),
                                      text[1:-1]))
        if kind == "ident" and self._peek()[1] != "(":
            return ("literal", _WORDS[text]) if text in _WORDS else ("variable", text)
        raise _unsupported(self.text, position)


def parse(condition: str):
    """The condition's syntax tree; UsageError for anything outside the subset."""
    return _Parser(condition).parse()


def variables(executor_input: pb.ExecutorInput) -> Dict[str, Any]:
    """The names a condition sees: ExecutorInput's fields, outputs not yet provisioned."""
    artifacts = {key: {"artifacts": [_artifact(a) for a in listed.artifacts]}
                 for key, listed in executor_input.inputs.artifacts.items()}
    parameters = {key: json_format.MessageToDict(value)
                  for key, value in executor_input.inputs.parameter_values.items()}
    return {"inputs": {"artifacts": artifacts, "parameter_values": parameters,
                       "parameters": {}},
            "outputs": {"artifacts": {}, "parameters": {}, "output_file": ""}}


def _artifact(artifact: pb.RuntimeArtifact) -> Dict[str, Any]:
    # As proto fields read in CEL: an unset message is its empty default.
    return {"name": artifact.name, "uri": artifact.uri,
            "type": json_format.MessageToDict(artifact.type, preserving_proto_field_name=True),
            "metadata": json_format.MessageToDict(artifact.metadata), "custom_properties": {}}


def evaluate(condition: str, executor_input: pb.ExecutorInput) -> bool:
    """Whether the task runs. Raises ConditionError where cel-go's evaluation would fail."""
    result = _value(parse(condition), variables(executor_input))
    if not isinstance(result, bool):
        raise ConditionError(f"return type is not bool, got {result!r}")
    return result


def _value(tree, scope: Dict[str, Any]):
    operator = tree[0]
    if operator == "literal":
        return tree[1]
    if operator == "variable":
        if tree[1] not in scope:
            raise ConditionError(f"undeclared reference to {tree[1]!r}")
        return scope[tree[1]]
    if operator in ("&&", "||"):
        return _logical(operator, tree[1], tree[2], scope)
    if operator == "!unary":
        value = _value(tree[1], scope)
        if not isinstance(value, bool):
            raise ConditionError(f"no such overload: !{value!r}")
        return not value
    if operator == "-unary":
        value = _value(tree[1], scope)
        if _kind(value) != "number":
            raise ConditionError(f"no such overload: -{value!r}")
        return -value
    left, right = _value(tree[1], scope), _value(tree[2], scope)
    if operator == "index":
        return _index(left, right)
    if operator == "+":
        return _add(left, right)
    return _relation(operator, left, right)


def _logical(operator: str, left_tree, right_tree, scope) -> bool:
    """CEL's commutative && and ||: a deciding side wins over an error on the other."""
    decider = operator == "||"  # true decides ||, false decides &&
    outcomes = []
    for side in (left_tree, right_tree):
        try:
            value = _value(side, scope)
        except ConditionError as error:
            value = error
        if value is decider:
            return decider
        outcomes.append(value)
    for value in outcomes:
        if isinstance(value, ConditionError):
            raise value
    if all(isinstance(value, bool) for value in outcomes):
        return not decider
    raise ConditionError(f"no such overload: {outcomes[0]!r} {operator} {outcomes[1]!r}")


def _kind(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", dict: "map", list: "list", type(None): "null"}[type(value)]


def _index(container, key):
    if isinstance(container, dict) and isinstance(key, str):
        if key not in container:
            raise ConditionError(f"no such key: {key!r}")
        return container[key]
    if isinstance(container, list) and _kind(key) == "number" and key == int(key):
        if not 0 <= int(key) < len(container):
            raise ConditionError(f"index out of bounds: {key!r}")
        return container[int(key)]
    raise ConditionError(f"no such overload: index {key!r} of {_kind(container)}")


def _add(left, right):
    same_number = (_kind(left) == _kind(right) == "number"
                   and isinstance(left, float) == isinstance(right, float))
    if same_number or (type(left) is type(right) and isinstance(left, (str, list))):
        return left + right
    raise ConditionError(f"no such overload: {left!r} + {right!r}")


def _equal(left, right) -> bool:
    if _kind(left) != _kind(right):
        return False  # cel-go's heterogeneous equality
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_equal(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_equal, left, right))
    return left == right


def _relation(operator: str, left, right) -> bool:
    if operator in ("==", "!="):
        return _equal(left, right) == (operator == "==")
    if _kind(left) != _kind(right) or _kind(left) not in ("number", "string", "bool"):
        raise ConditionError(f"no such overload: {left!r} {operator} {right!r}")
    return {"<": left < right, "<=": left <= right,
            ">": left > right, ">=": left >= right}[operator]
