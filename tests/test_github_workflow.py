"""The GitHub Actions workflow is valid and safe: GitHub's schema, zizmor, pinned actions.

Both tools come with the project's `test` extra (docs/install.md) and work offline:
check-jsonschema vendors GitHub's workflow schema, and zizmor runs its offline audits.
"""
import json
import pathlib
import re
import subprocess
import sys

import pytest

from tests.support.paths import REPO

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.y*ml"))
# The venv's own tools, not whatever is first on PATH: sys.executable is .venv/bin/python.
BIN = pathlib.Path(sys.executable).parent
# zizmor exits 0 without findings, and 10 + the highest severity (11-14) with some.
ZIZMOR_FINDINGS_EXITS = (0, 11, 12, 13, 14)
PINNED_USES = re.compile(r"uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$")


def _run(tool: str, *args: str) -> subprocess.CompletedProcess:
    """Runs one of the venv's tools in the repository root and captures its output."""
    if not (BIN / tool).exists():
        pytest.fail(f"{BIN / tool} is missing: it comes with the `test` extra; "
                    "run `bash scripts/install.sh`")
    return subprocess.run([str(BIN / tool), *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


def _describe(finding: dict) -> str:
    """One zizmor finding (its JSON v1 form) as `audit: what at file:line`."""
    where = finding["locations"][0]
    path = where["symbolic"]["key"].get("Local", {}).get("verbatim_path", "?")
    line = where["concrete"]["location"]["start_point"]["row"] + 1
    return f"{finding['ident']}: {finding['desc']} at {path}:{line}"


def test_there_is_a_workflow():
    assert WORKFLOWS, "no workflow in .github/workflows"


def test_workflows_match_githubs_schema():
    result = _run("check-jsonschema", "--builtin-schema", "vendor.github-workflows",
                  *map(str, WORKFLOWS))
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_finds_nothing_of_high_severity():
    result = _run("zizmor", "--offline", "--format", "json", "--no-progress", ".github")
    assert result.returncode in ZIZMOR_FINDINGS_EXITS, result.stdout + result.stderr
    high = [_describe(finding) for finding in json.loads(result.stdout)
            if finding["determinations"]["severity"] == "High"]
    assert not high, "zizmor: " + "; ".join(high)


def test_every_action_is_pinned_to_a_commit_with_its_release_named():
    loose = [f"{path.name}:{number}: {line.strip()}"
             for path in WORKFLOWS
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if re.match(r"\s*(- )?uses:", line) and not PINNED_USES.search(line.strip())]
    assert not loose, ("pin each action as `owner/repo@<40-hex commit> # vX.Y.Z`: "
                       + "; ".join(loose))
