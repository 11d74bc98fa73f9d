"""Errors the CLI turns into exit codes, without a traceback."""


class UsageError(Exception):
    """Bad input from the user (a flag, the data, the output dir): exit code 2."""


class PipelineFailed(Exception):
    """A component failed while the pipeline ran: exit code 1."""

    def __init__(self, component: str, cause: BaseException):
        super().__init__(f"pipeline failed in {component}: {type(cause).__name__}: "
                         f"{_first_line(cause)}")
        self.component = component


def _first_line(error: BaseException) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else "(no message)"
