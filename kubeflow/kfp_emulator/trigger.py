"""A task's `triggerPolicy.condition`, compiled and evaluated as the KFP backend's driver does.

The driver (backend/src/v2/expression, Expr.Condition) compiles the condition with cel-go
against ExecutorInput's fields, `inputs` and `outputs` (cel.DeclareContextProto), plus a
`parseJson(string)` function, and evaluates it before the task's outputs are provisioned:
`inputs` holds the input artifacts as MLMD returns them (name = id, uri, metadata = the
producer's properties and custom properties, numbers as doubles) and the input parameter
values. A condition that does not compile, or whose evaluation errs or is not a bool, fails
the task; false skips it.

Here cel-expr-python, the CEL project's Python runtime (cel-cpp, the same language
definition and conformance suite as cel-go), compiles the condition type-checked against the
same ExecutorInput proto, so every CEL construct behaves as on a cluster: heterogeneous `==`,
`int()`/`double()`/`string()`, `has()`, `size()`, && and || absorbing an error when the other
side decides. docs/install.md says why this library and not cel-python or
common-expression-language.
"""
import functools
import json

from cel_expr_python import cel
from google.protobuf import descriptor_pool
from kfp.pipeline_spec import pipeline_spec_pb2 as pb

from core.errors import UsageError

_CONTEXT = pb.ExecutorInput.DESCRIPTOR  # DeclareContextProto: each field is a variable


class ConditionError(Exception):
    """The condition could not be evaluated on these inputs (the driver fails the task)."""


def _parse_json(text: str):
    # As Go's json.Unmarshal into interface{}, which the driver's parseJson calls: every
    # number is a float64, so `parseJson(s).n + 1.0` type-checks as it does there.
    try:
        return json.loads(text, parse_int=float)
    except ValueError as e:
        raise ValueError(f"failed to unmarshal JSON: {e}") from None


@functools.lru_cache(maxsize=None)
def _environment() -> "cel.Env":
    variables = {field.name: cel.Type(field.message_type.full_name)
                 for field in _CONTEXT.fields}
    parse_json = cel.FunctionDecl("parseJson", [cel.Overload(
        "parse_json", return_type=cel.Type.DYN, parameters=[cel.Type.STRING],
        impl=_parse_json)])
    return cel.NewEnv(descriptor_pool.Default(), variables=variables, functions=[parse_json])


def parse(condition: str) -> "cel.Expression":
    """The condition compiled and type-checked; UsageError where cel-go's compile would fail."""
    try:
        return _environment().compile(condition)
    except RuntimeError as e:
        raise UsageError(f"trigger condition {condition!r} does not compile against KFP's "
                         f"ExecutorInput, so the backend's driver would fail the task: {e}"
                         ) from None


def evaluate(condition: str, executor_input: pb.ExecutorInput) -> bool:
    """Whether the task runs. Raises ConditionError where the driver's evaluation would fail."""
    # The driver evaluates before provisioning the task's outputs: `outputs` is empty.
    result = parse(condition).eval(data={"inputs": executor_input.inputs,
                                         "outputs": pb.ExecutorInput.Outputs()})
    if result.type() == cel.Type.ERROR:
        raise ConditionError(f"evaluation error: {result.value()}")
    if result.type() != cel.Type.BOOL:
        raise ConditionError(f"evaluation error: return type is not bool, got "
                             f"{result.plain_value()!r}")
    return result.value()
