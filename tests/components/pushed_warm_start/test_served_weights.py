"""The Kubeflow target's warm start: the served version's weights, or why there are none."""
import json

from components.image_pusher.provenance import INFO_FILE, ORIGIN_FILE, WARM_START_DIR, WEIGHTS_FILE
from components.image_pusher.versions import ServingState, publish, write_serving_state
from components.pushed_warm_start.served_weights import fill, served_origin


def _trained(tmp_path, name: str, weights: bool = True) -> str:
    """A Trainer's Model artifact: its SavedModel and, with `weights`, its warm_start folder."""
    model = tmp_path / "Trainer" / "model" / name
    (model / "Format-Serving").mkdir(parents=True)
    (model / "Format-Serving" / "saved_model.pb").write_bytes(b"graph")
    if weights:
        (model / WARM_START_DIR).mkdir()
        (model / WARM_START_DIR / WEIGHTS_FILE).write_bytes(b"weights of " + name.encode())
        (model / WARM_START_DIR / INFO_FILE).write_text(json.dumps({"model": "cnn"}))
    return str(model)


def _push(tmp_path, base: str, version: int, weights: bool = True) -> str:
    """Version `version`, pushed as the Pusher does, from a model of its own."""
    model = _trained(tmp_path, str(version), weights)
    publish(f"{model}/Format-Serving", base, version, source_uri=model,
            record={"spans": [version], "accuracy": 0.9})
    return model


def test_nothing_pushed_yet(tmp_path):
    origin = served_origin(str(tmp_path / "serving" / "m"))
    assert origin.folder is None and origin.version is None
    assert origin.reason == "nothing pushed yet"


def test_the_served_version_is_the_newest_complete_one(tmp_path):
    base = str(tmp_path / "serving" / "m")
    _push(tmp_path, base, 1)
    model = _push(tmp_path, base, 2)
    (tmp_path / "serving" / "m" / "3").mkdir()  # no saved_model.pb: a server cannot load it
    origin = served_origin(base)
    assert (origin.version, origin.source_uri) == (2, model)
    assert origin.folder == f"{model}/{WARM_START_DIR}"


def test_the_pin_counts_and_a_rolled_back_version_never_does(tmp_path):
    base = str(tmp_path / "serving" / "m")
    models = {version: _push(tmp_path, base, version) for version in (1, 2, 3)}
    write_serving_state(base, ServingState(pinned=2, rolled_back=(3,)))
    assert served_origin(base).source_uri == models[2]
    # Without the pin, the rolled-back 3 still stays out.
    write_serving_state(base, ServingState(pinned=None, rolled_back=(3,)))
    assert served_origin(base).version == 2
    write_serving_state(base, ServingState(pinned=None, rolled_back=(1, 2, 3)))
    assert served_origin(base).reason == "no pushed version is in service"


def test_a_served_model_without_weights_is_no_start_and_no_fallback(tmp_path):
    base = str(tmp_path / "serving" / "m")
    _push(tmp_path, base, 1)
    _push(tmp_path, base, 2, weights=False)  # its pipeline root was cleaned, say
    origin = served_origin(base)
    assert origin.folder is None and origin.version == 2
    assert origin.reason.startswith("version 2's model kept no weights")


def test_a_version_pushed_by_something_else_names_no_source(tmp_path):
    base = str(tmp_path / "serving" / "m")
    publish(_trained(tmp_path, "by-hand") + "/Format-Serving", base, 5)  # no provenance
    origin = served_origin(base)
    assert origin.folder is None and "version 5 records no source model" in origin.reason


def test_fill_copies_the_folder_and_names_its_origin(tmp_path):
    base = str(tmp_path / "serving" / "m")
    model = _push(tmp_path, base, 7)
    out = tmp_path / "out"
    fill(served_origin(base), str(out))
    assert (out / WARM_START_DIR / WEIGHTS_FILE).read_bytes() == b"weights of 7"
    origin = json.loads((out / WARM_START_DIR / ORIGIN_FILE).read_text())
    assert origin == {"version": 7, "source_uri": model, "reason": None}


def test_fill_on_nothing_writes_only_the_reason(tmp_path):
    out = tmp_path / "out"
    fill(served_origin(str(tmp_path / "serving" / "m")), str(out))
    assert sorted(p.name for p in (out / WARM_START_DIR).iterdir()) == [ORIGIN_FILE]
    assert json.loads((out / WARM_START_DIR / ORIGIN_FILE).read_text()) == {
        "version": None, "source_uri": None, "reason": "nothing pushed yet"}


def test_it_reads_and_writes_object_stores(tmp_path):
    from core.storage import files
    bucket = f"ram://pushed-warm-start-{tmp_path.name}"  # one per test: ram:// is per process
    base = f"{bucket}/serving/m"
    model = _push(tmp_path, base, 4)
    fill(served_origin(base), f"{bucket}/out")
    assert files.read_bytes(f"{bucket}/out/{WARM_START_DIR}/{WEIGHTS_FILE}") == b"weights of 4"
    assert served_origin(base).source_uri == model


def test_a_retry_that_finds_nothing_leaves_no_weights_of_the_first_attempt(tmp_path):
    base = str(tmp_path / "serving" / "m")
    _push(tmp_path, base, 1)
    out = tmp_path / "out"
    fill(served_origin(base), str(out))
    fill(served_origin(str(tmp_path / "serving" / "other")), str(out))
    assert not (out / WARM_START_DIR / WEIGHTS_FILE).exists()
