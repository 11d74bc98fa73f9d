"""A fault for tests: the serving check's process hangs, as on an overloaded or broken node.

Python imports `sitecustomize` at start-up from the first folder of sys.path that has
one, so a test puts this folder on PYTHONPATH for the run it wants to fail, with
IMAGEPIPE_TEST_FAULT=stall-serving: every process of that run imports this, and
only the serving check's worker (components/serving_validator/serving_worker.py,
found by its command line) then sleeps past any check's timeout. Nothing in the
product knows of it; the check sees what a hung process looks like.
"""
import os
import time

FAULT_ENV = "IMAGEPIPE_TEST_FAULT"
STALL_SERVING = "stall-serving"
WORKER = b"components.serving_validator.serving_worker"

if os.environ.get(FAULT_ENV) == STALL_SERVING:
    try:
        with open("/proc/self/cmdline", "rb") as cmdline:
            stall = WORKER in cmdline.read()
    except OSError:
        stall = False
    if stall:
        time.sleep(3600)
