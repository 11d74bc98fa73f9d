"""Where things are, for the tests: the repository, its bundled data, scripts and binaries.

Every test names the repository through REPO here, so moving a test file never
changes what its paths point at.
"""
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
SUPPORT = TESTS / "support"  # these helpers; scripts here run by path in other venvs
MNIST_PNG = REPO / "data" / "mnist_1k" / "png"  # 1,000 real digits, a folder per class
MNIST_IDX = REPO / "data" / "mnist_1k" / "idx"  # the same digits as IDX files
EXAMPLE_MODULE = REPO / "modules" / "examples" / "tiny_convnet.py"  # a user's model file
# scripts/install.sh's virtual environment: the one scripts/test.sh runs pytest from.
VENV_BIN = REPO / ".venv" / "bin"
PYTHON = VENV_BIN / "python"
IMAGEPIPE = VENV_BIN / "imagepipe"  # the installed console script, as a user runs it
WITH_GCS = REPO / "scripts" / "with_gcs.sh"  # a fake GCS server in a network namespace
RUN_LOCAL = REPO / "kubeflow" / "run_local.py"  # the KFP emulator's command
SUBMIT = REPO / "kubeflow" / "submit.py"
ALERT_RULES = REPO / "kubeflow" / "alert_rules"  # alerts.rules.yml and its promtool test
# The compiled packages tests/kfp_compiler/test_compiler.py pins (and the emulator runs).
GOLDEN = TESTS / "kfp_compiler" / "golden"
