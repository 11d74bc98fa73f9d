"""Shared benchmark plumbing: machine info, a plain-text table, the JSON result file."""
import json
import os
import platform
import time

RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def machine_info() -> dict:
    """What the numbers were measured on."""
    import tensorflow as tf
    return {"cpus": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "tensorflow": tf.__version__,
            "when": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def print_table(rows, columns) -> None:
    """Rows of dicts as aligned columns; floats with 2 decimals."""
    cells = [[f"{r[c]:.2f}" if isinstance(r[c], float) else str(r[c]) for c in columns]
             for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))


def write_results(name: str, payload: dict) -> dict:
    """Writes bench/results/<name>.json and returns the payload."""
    os.makedirs(RESULTS_DIR, exist_ok=True)
    with open(os.path.join(RESULTS_DIR, f"{name}.json"), "w") as f:
        json.dump(payload, f, indent=2)
    print(f"wrote {os.path.join(RESULTS_DIR, name + '.json')}")
    return payload
