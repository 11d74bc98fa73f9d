"""Two ImageExampleGen executions ingesting one span at once, for test_span_race.py.

    python -m tests.components.image_example_gen.span_race_steps \
        RESULTS.json PATTERN OUTPUT [LOCAL_SPAN SPAN_URI]    # from the repository root
    python -m tests.components.image_example_gen.span_race_steps \
        RESULTS.json classes OUTPUT LOCAL_A URI_A LOCAL_B URI_B

Each worker is a process of its own, as on two machines: it imports everything,
says it is ready, waits for the start signal, then runs the real executor (no
driver, as on Kubeflow) on the same pattern and output, so both ingest into one
span store. With LOCAL_SPAN and SPAN_URI, the span is first copied there (run
inside scripts/with_gcs.sh for a bucket). RESULTS.json gets each worker's exit
code, output and report, and what the span store holds: markers, attempt
folders, and the records each published split file really holds.

`classes`: two workers ingest two different datasets (URI_A/s1, URI_B/s1, each
bringing a class the other lacks) into one span store at once; RESULTS.json also
gets the store's classes.json and, per entry, how many records' label ids name
another class there than the record's own class text.

`in_threads` runs the same executions as threads of the calling process.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

from tests.support.examples import example_gen_properties, read_split, run_example_gen
from tests.support.paths import REPO

MODULE = "tests.components.image_example_gen.span_race_steps"
WORKERS = 2
RESULT = "RESULT "  # a worker's last line: its report, as JSON


def in_threads(pattern: str, output: str) -> list:
    """The executions as threads of this process, started together; their reports."""
    import threading
    import components.image_example_gen.executor  # noqa: F401  (before the start)
    props, start = _properties(pattern, output), threading.Barrier(WORKERS)
    found = [{"code": 1} for _ in range(WORKERS)]

    def run(index: int) -> None:
        start.wait()
        examples = run_example_gen(f"{output}/examples/{index}", dict(props))
        found[index] = {"code": 0, "report": _report(examples.uri),
                        "records": _records(examples.uri)}
    threads = [threading.Thread(target=run, args=(i,)) for i in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return found


def _report(folder: str) -> dict:
    from core.contract import read_ingest_report
    return read_ingest_report(folder)


def _properties(pattern: str, output: str) -> dict:
    return example_gen_properties(pattern, data=pattern, output=output, eval_percent=30)


def worker(pattern: str, output: str, index: str, signals: str) -> None:
    """One execution: ready, wait for the start, ingest, print the report."""
    import components.image_example_gen.executor  # noqa: F401  (before the start)
    props = _properties(pattern, output)
    open(os.path.join(signals, f"ready-{index}"), "w").close()
    while not os.path.exists(os.path.join(signals, "go")):
        time.sleep(0.005)
    examples = run_example_gen(f"{output}/examples/{index}", props)
    print(RESULT + json.dumps({"report": _report(examples.uri),
                               "records": _records(examples.uri)}))


def _records(folder: str) -> dict:
    """{split: records read back from its gzipped TFRecord files}: a truncated file fails."""
    return {split: len(read_split(folder, split)) for split in ("train", "eval")}


def store_entries(output: str) -> dict:
    """Every entry of the span store: its names, the published attempt, its records."""
    from core.storage import files
    from components.image_example_gen import span_store
    from settings.config import PipelineConfig
    store = PipelineConfig.from_values(output=output).ingest_options().span_store
    entries = {}
    for name in files.list_dir(store)[0]:
        entry = f"{store}/{name}"
        published = span_store.published(entry)
        entries[name] = {"names": files.listdir(entry), "published": published,
                         "records": _records(published) if published else None,
                         "report_splits": _report(published)["splits"] if published else None}
    return entries


def _start(patterns: list, output: str, signals: str) -> list:
    """The workers (one per pattern), started together once every one of them is ready."""
    workers = [subprocess.Popen([sys.executable, "-m", MODULE, "worker", pattern, output,
                                 str(i), signals], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=REPO)
               for i, pattern in enumerate(patterns)]
    deadline = time.monotonic() + 300
    while len([n for n in os.listdir(signals) if n.startswith("ready-")]) < WORKERS:
        if time.monotonic() > deadline or any(w.poll() is not None for w in workers):
            break
        time.sleep(0.01)
    open(os.path.join(signals, "go"), "w").close()
    return workers


def race(pattern: str, output: str, results: str, local_span=None, span_uri=None) -> None:
    """Copies the span if asked, runs the workers at once, records what they left."""
    started = time.monotonic()
    if local_span:
        from core.storage.tree_copy import copy_tree
        copy_tree(local_span, span_uri)
    found = _run_workers([pattern] * WORKERS, output)
    with open(results, "w") as f:
        json.dump({"workers": found, "store": store_entries(output),
                   "seconds": round(time.monotonic() - started, 1)}, f, indent=1)


def class_race(results: str, output: str, local_a: str, uri_a: str, local_b: str,
               uri_b: str) -> None:
    """Two datasets with different new classes into one store at once; what it holds."""
    from core.storage.tree_copy import copy_tree
    started = time.monotonic()
    copy_tree(local_a, f"{uri_a}/s1")
    copy_tree(local_b, f"{uri_b}/s1")
    found = _run_workers([f"{uri_a}/s{{SPAN}}", f"{uri_b}/s{{SPAN}}"], output)
    with open(results, "w") as f:
        json.dump({"workers": found, "store": store_entries(output),
                   "labels": label_agreement(output),
                   "seconds": round(time.monotonic() - started, 1)}, f, indent=1)


def label_agreement(output: str) -> dict:
    """{"classes": the store's classes.json, "entries": {entry: {"records", "disagree"}}}:
    a record disagrees when classes.json names another class at its label id than its
    class text."""
    from core.contract import CLASS_TEXT_KEY, LABEL_KEY
    from components.image_example_gen import span_store
    from core.storage import files
    from settings.config import PipelineConfig
    store = PipelineConfig.from_values(output=output).ingest_options().span_store
    classes = span_store.known_classes(store)
    entries = {}
    for name in files.list_dir(store)[0]:
        folder = span_store.published(f"{store}/{name}")
        rows = [row for split in ("train", "eval") for row in read_split(folder, split)]
        wrong = [row for row in rows if classes[
            row.features.feature[LABEL_KEY].int64_list.value[0]] != row.features.feature[
            CLASS_TEXT_KEY].bytes_list.value[0].decode()]
        entries[name] = {"records": len(rows), "disagree": len(wrong)}
    return {"classes": classes, "entries": entries}


def _run_workers(patterns: list, output: str) -> list:
    """The workers' exit codes, output tails and reports."""
    found = []
    with tempfile.TemporaryDirectory() as signals:
        for process in _start(patterns, output, signals):
            out, err = process.communicate(timeout=600)
            result = [line for line in out.splitlines() if line.startswith(RESULT)]
            found.append({"code": process.returncode, "stdout": out[-4000:],
                          "stderr": err[-4000:],
                          **(json.loads(result[-1][len(RESULT):]) if result else {})})
    return found


if __name__ == "__main__":
    args = sys.argv[1:]
    # TFX's Beam executor parses sys.argv with absl flags: leave it nothing to parse.
    del sys.argv[1:]
    if args[0] == "worker":
        worker(*args[1:])
    elif args[1] == "classes":
        class_race(args[0], *args[2:])
    else:
        race(args[1], args[2], args[0], *args[3:])
