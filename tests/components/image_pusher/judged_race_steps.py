"""Two processes write judged.json entries at once, for test_judged_inputs.py.

    python -m tests.components.image_pusher.judged_race_steps RESULTS.json ROOT [WRITES]

Run inside scripts/with_gcs.sh for a gs:// ROOT. Each writer is a process of its own,
as a run on another machine would be; both wait for one start signal, then write
WRITES entries each, a new model name every time, so that every lost update shows.
RESULTS.json gets the writers' exit codes and the entries judged.json holds.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

from tests.support.paths import REPO

MODULE = "tests.components.image_pusher.judged_race_steps"
MODELS = ("a", "b")


def writer(root: str, model: str, count: int, signals: str) -> None:
    from components.image_pusher.judged_inputs import PUSHED, record_judged
    open(os.path.join(signals, f"ready-{model}"), "w").close()
    while not os.path.exists(os.path.join(signals, "go")):  # both start together
        time.sleep(0.001)
    for number in range(count):
        record_judged(f"{root}/{model}-{number}", "in", None, PUSHED, f"pushed {number}",
                      number)


def race(results: str, root: str, count: int) -> None:
    with tempfile.TemporaryDirectory() as signals:
        writers = [subprocess.Popen([sys.executable, "-m", MODULE, "writer", root, model,
                                     str(count), signals], cwd=REPO) for model in MODELS]
        deadline = time.monotonic() + 120
        while (len([n for n in os.listdir(signals) if n.startswith("ready-")]) < len(MODELS)
               and time.monotonic() < deadline
               and all(w.poll() is None for w in writers)):
            time.sleep(0.01)
        open(os.path.join(signals, "go"), "w").close()
        codes = [w.wait(timeout=600) for w in writers]
    from components.image_pusher.judged_inputs import JUDGED_FILE
    from core.storage import shared_json
    entries = shared_json.read_json(f"{root}/{JUDGED_FILE}", {})
    with open(results, "w") as f:
        json.dump({"codes": codes, "entries": sorted(entries)}, f)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[0] == "writer":
        writer(args[1], args[2], int(args[3]), args[4])
    else:
        race(args[0], args[1], int(args[2]) if len(args) > 2 else 100)
