"""Helpers shared by the tests: repository paths, the CLI, digit spans, images, servers.

Import the module that offers what you need (`from tests.support.paths import REPO`);
nothing here imports TensorFlow at import time. Scripts that tests start as
subprocesses (the `*_steps.py` modules) run as `python -m tests.support.NAME` from the
repository root.
"""
