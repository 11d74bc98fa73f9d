"""scripts/install.sh: refuses the wrong Python, and is a no-op on a complete .venv."""
import os
import subprocess
import time

import pytest

from tests.support.paths import IMAGEPIPE, PYTHON, REPO

pytestmark = pytest.mark.integration  # runs scripts/install.sh

INSTALL = REPO / "scripts" / "install.sh"


def _install(**env):
    return subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env}, cwd=REPO)


def test_other_python_versions_are_refused_clearly(tmp_path):
    fake = tmp_path / "python3.12"
    fake.write_text("#!/bin/sh\necho 3.12\n")  # answers the version probe only
    fake.chmod(0o755)
    result = _install(PYTHON=str(fake))
    assert result.returncode == 2
    assert "needs Python 3.11:" in result.stderr
    assert "Python 3.12" in result.stderr and "PYTHON=" in result.stderr


def test_missing_python_is_named(tmp_path):
    result = _install(PYTHON=str(tmp_path / "nope"))
    assert result.returncode == 2 and "not found" in result.stderr


def test_complete_venv_makes_install_a_fast_no_op():
    # scripts/test.sh installed before pytest started, so the stamp matches.
    start = time.monotonic()
    result = _install()
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and time.monotonic() - start < 10


def test_the_command_starts_without_resolving_the_dependency_tree():
    # A legacy `setup.py develop` script sets __requires__, and pkg_resources
    # (imported by TensorFlow) then resolves every dependency: 3.1 s per command.
    script = IMAGEPIPE.read_text()
    assert "from cli.main import console_main" in script and "__requires__" not in script
    check = subprocess.run(
        [str(PYTHON), "-c",
         "import pipeline, components, modules, sys; "
         "print(all(m.__file__.startswith(sys.argv[1]) for m in (pipeline, components, modules)))",
         str(REPO)], capture_output=True, text=True, timeout=60, cwd="/")
    assert check.stdout.strip() == "True", check.stderr  # editable: the checkout's code
