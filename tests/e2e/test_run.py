"""`imagepipe run` end to end, as a subprocess, on 100 real digits; then again, cached."""
import json
import os
import pathlib
import re

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image
from ml_metadata import metadata_store
from ml_metadata.proto import metadata_store_pb2

from core.contract import COMPONENT_IDS
from tests.support.cli import imagepipe, run_pipeline
from tests.support.digits import make_span
from tests.support.examples import image_example

pytestmark = pytest.mark.slow
# Resolvers re-query ML Metadata on every run, by design.
RESOLVERS = {"latest_blessed_model_resolver", "warm_start_model_resolver"}


def _run(data, output, *extra, length=("--train-steps", "30")):
    return run_pipeline(
        data, output, *length,
        "--eval-steps", "2", "--accuracy-threshold", "0", "--tensorboard-update-freq", "10",
        # Float32 TFLite agrees with the SavedModel to 1e-5, so the gate cannot flake
        # on 20 eval images; quantized gates are tested in tests/components/image_pusher.
        "--quantize", "none", *extra)


def _executions_by_node(metadata_path):
    """{node id: [execution state names]} read straight from the MLMD store."""
    connection = metadata_store_pb2.ConnectionConfig()
    connection.sqlite.filename_uri = str(metadata_path)
    store = metadata_store.MetadataStore(connection)
    states = {}
    for context in store.get_contexts_by_type("node"):
        node = context.name.split(".", 1)[1]
        states[node] = [metadata_store_pb2.Execution.State.Name(e.last_known_state)
                        for e in sorted(store.get_executions_by_context(context.id),
                                        key=lambda e: e.id)]
    return states


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Runs the pipeline twice on the same data and output directory."""
    root = tmp_path_factory.mktemp("e2e")
    data = make_span(root / "data", take=slice(0, 10), ready=False)
    first, first_stdout = _run(data, root / "out")
    report = root / "out" / "report"
    (root / "first_report.json").write_text(json.dumps(
        {p.name: p.stat().st_mtime_ns for p in report.iterdir()}))
    second, second_stdout = _run(data, root / "out")
    (root / "second_stdout.txt").write_text(second_stdout)
    return root / "out", first, second, first_stdout, data


def test_every_component_executed_once_then_was_cached(two_runs):
    out, *_ = two_runs
    states = _executions_by_node(out / "metadata.sqlite")
    assert set(states) == set(COMPONENT_IDS)
    for node, history in states.items():
        expected = ["COMPLETE", "COMPLETE"] if node in RESOLVERS else ["COMPLETE", "CACHED"]
        assert history == expected, node


def test_summary_has_the_contract_keys_and_sane_values(two_runs):
    out, first, _, stdout, data = two_runs
    assert first["data"]["path"] == str(data)
    assert first["data"]["format"] == "folder"
    assert set(first["data"]["splits"]) == {"train", "eval"}
    assert sum(first["data"]["splits"].values()) == 100
    assert 10 <= first["data"]["splits"]["eval"] <= 35
    assert first["data"]["classes"] == [str(i) for i in range(10)]
    assert 0.0 <= first["eval"]["accuracy"] <= 1.0
    assert first["eval"]["blessed"] is True
    assert first["eval"]["baseline_accuracy"] is None
    per_class = first["eval"]["per_class"]
    assert list(per_class) == [str(i) for i in range(10)]
    eval_counts = first["data"]["per_class"]["eval"]
    assert all((v is None) == (eval_counts[k] == 0) for k, v in per_class.items())
    assert all(0.0 <= v <= 1.0 for v in per_class.values() if v is not None)
    # The confusion matrix counts every eval image once and agrees with both accuracies.
    matrix = np.array(first["eval"]["confusion_matrix"])
    assert matrix.shape == (10, 10)
    assert matrix.sum(axis=1).tolist() == [eval_counts[str(i)] for i in range(10)]
    assert np.trace(matrix) / matrix.sum() == pytest.approx(first["eval"]["accuracy"])
    for i, accuracy in enumerate(per_class.values()):
        if accuracy is not None:
            assert matrix[i, i] / matrix[i].sum() == pytest.approx(accuracy)
    assert first["eval"]["reason"] == "accuracy >= threshold 0.0; no blessed baseline yet"
    assert set(first["timings_s"]) == set(COMPONENT_IDS) | {"total"}
    assert first["timings_s"]["total"] >= first["timings_s"]["Trainer"] > 0
    assert first["cached"] == []
    assert f"{first['eval']['accuracy']:.4f}" in stdout
    # 30 steps of 64 in 10 epochs: 192 examples an epoch, timed inside fit.
    training = first["training"]
    assert training["examples_per_epoch"] == 192 and len(training["epoch_seconds"]) == 10
    assert training["examples_per_s"] > 0
    assert "examples/s in fit" in stdout
    # The plan: what the data chose (the cnn at 28 px), what the flags fixed, and why.
    plan = first["plan"]
    assert (plan["values"]["model"], plan["values"]["image_size"]) == ("cnn", 28)
    assert plan["values"]["train_steps"] == 30 and plan["reasons"]["accuracy_threshold"] == (
        "given (--accuracy-threshold)")
    assert "plan      CPU; model cnn: small grayscale images (28 px)" in stdout
    assert not list((out / "tfx" / "Trainer").rglob(".decode_cache"))


def test_summary_carries_data_health_and_the_audit(two_runs):
    out, first, _, stdout, _ = two_runs
    health = first["data_health"]
    assert health["images"] == 100 and health["counts"]["leaked"] == health["leakage"]["count"]
    # Eval figures of the audit: leakage-free accuracy, corruptions, FGSM, slices.
    evaluation, robustness, slices = first["eval"], first["robustness"], first["slices"]
    assert evaluation["leaked"] == health["leakage"]["count"]
    assert set(robustness["corruptions"]) == {"gaussian_noise", "gaussian_blur", "brightness",
                                              "contrast", "jpeg"}
    assert all(set(levels) == {"1", "2", "3"} for levels in robustness["corruptions"].values())
    assert 0 <= robustness["mean"] <= 1 and 0 <= robustness["fgsm"]["accuracy"] <= 1
    # Every digit is a 28 px grayscale square: one slice per derived feature.
    assert {feature: list(values) for feature, values in slices["by_feature"].items()} == {
        "image/slice/size": ["<=64px"], "image/slice/color": ["grayscale"],
        "image/slice/aspect": ["square"]}
    assert slices["overall"] == pytest.approx(evaluation["accuracy"])
    assert first["saliency"]["method"] == "grad-cam" and first["saliency"]["images"]
    assert set(evaluation["gates"]) == {"min_accuracy", "min_leak_free_accuracy",
                                        "max_leakage_gain", "min_robust_accuracy",
                                        "max_slice_gap"}
    page = (out / "report" / "index.html").read_text()
    for section in ("Data health", "Suspected label errors", "Robustness", "Slices"):
        assert section in page
    assert first["pushed"]["model_card"].endswith("assets.extra/model_card.html")
    assert os.path.exists(first["pushed"]["model_card"])


def test_pushed_model_loads_and_classifies(two_runs):
    out, first, _, _, data = two_runs
    version_dir = first["pushed"]["serving"]
    assert os.path.dirname(version_dir) == str(out / "serving" / "imagepipe")
    assert os.path.isfile(os.path.join(version_dir, "saved_model.pb"))
    assert first["pushed"]["version"] == int(os.path.basename(version_dir))
    # The monitoring reference ships with it (the Evaluator's, through the Pusher).
    monitoring = os.path.join(version_dir, "assets.extra", "monitoring")
    reference = json.loads(open(os.path.join(monitoring, "reference.json")).read())
    assert reference["train_statistics"] == "train_statistics.pb"
    assert os.path.getsize(os.path.join(monitoring, "train_statistics.pb")) > 0
    assert len(reference["eval"]["predicted"]) == reference["eval"]["count"] > 0
    assert f'base_path: "{out / "serving" / "imagepipe"}"' in \
        (out / "serving" / "models.config").read_text()
    serve = tf.saved_model.load(version_dir).signatures["serving_default"]
    images = [sorted((data / str(d)).iterdir())[0] for d in range(10)]
    outputs = serve(examples=tf.constant([image_example(p.read_bytes()) for p in images]))
    probabilities = outputs["probabilities"].numpy()
    assert probabilities.shape == (10, 10)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-4)
    predicted = outputs["class_id"].numpy()
    assert [n.decode() for n in outputs["class_name"].numpy()] == [str(i) for i in predicted]
    # 30 steps on 80 digits: far from perfect, but far above chance (0.1).
    assert (predicted == np.arange(10)).mean() >= 0.3


def test_tflite_is_pushed_beside_the_saved_model_after_its_gate(two_runs):
    out, first, _, _, _ = two_runs
    pushed = first["pushed"]
    assert pushed["tflite"] == str(out / "tflite" / "imagepipe" / str(pushed["version"]))
    assert pushed["tflite_gate"]["ok"] and pushed["tflite_gate"]["drop"] <= 0.0
    # The gate records each conversion it tried, the one written last.
    assert pushed["tflite_gate"]["tried"][-1]["quantize"] == pushed["tflite_gate"]["quantize"]
    assert sorted(os.listdir(pushed["tflite"])) == ["labels.txt", "model.tflite",
                                                    "model_card.html", "model_card.json",
                                                    "model_info.json"]
    info = json.loads(open(os.path.join(pushed["tflite"], "model_info.json")).read())
    assert info["input"]["shape"] == [28, 28, 1] and info["labels"] == [str(i) for i in range(10)]


def test_the_pushed_version_passed_the_serving_check_and_carries_warmup(two_runs):
    from components.serving_validator.warmup import WARMUP_FILE, read_logs
    _, first, _, _, _ = two_runs
    check = first["pushed"]["serving_check"]
    assert check["ok"] and check["max_abs_diff"] < 1e-4, check
    digits = first["data"]["splits"]["eval"]
    assert check["rest_requests"] == min(digits, 32) and 0 < check["p50_ms"] <= check["p99_ms"]
    logs = read_logs(os.path.join(first["pushed"]["serving"], WARMUP_FILE))
    # The eval digits one by one, then one batch of 8 and one of 32 where there are enough.
    assert len(logs) == check["warmup_records"] == digits + (digits >= 8) + (digits >= 32)
    assert {log.predict_log.request.model_spec.signature_name for log in logs} == {
        "serving_image"}


def test_predict_agrees_across_model_kinds_and_names_bad_files(two_runs, tmp_path):
    out, first, _, _, data = two_runs
    png = sorted((data / "7").iterdir())[0]
    jpg = tmp_path / "seven.jpg"
    Image.open(png).convert("RGB").save(jpg, quality=95)
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    tops = []
    for model in (first["pushed"]["serving"], str(out / "serving" / "imagepipe"),
                  os.path.join(first["pushed"]["tflite"], "model.tflite")):
        result = imagepipe("predict", "--model", model, "--top-k", "1", png, jpg, bad,
                           timeout=300)
        assert result.returncode == 2, result.stderr[-2000:]
        lines = result.stdout.splitlines()
        assert lines[2] == f"{bad}: error: cannot decode: not an image format PIL recognises"
        tops.append([line.split(": ")[1].split(" (")[0] for line in lines[:2]])
    assert tops[0] == tops[1] == tops[2], tops


def test_serving_image_agrees_with_serving_default(two_runs):
    _, first, _, _, data = two_runs
    signatures = tf.saved_model.load(first["pushed"]["serving"]).signatures
    images = [sorted((data / str(d)).iterdir())[1] for d in range(10)]
    by_example = signatures["serving_default"](
        examples=tf.constant([image_example(p.read_bytes()) for p in images]))
    by_bytes = signatures["serving_image"](
        image_bytes=tf.constant([p.read_bytes() for p in images]))
    np.testing.assert_allclose(by_bytes["probabilities"], by_example["probabilities"], atol=1e-6)


def test_training_logs_hold_both_custom_summaries(two_runs):
    out = two_runs[0]
    tags = set()
    for path in tf.io.gfile.glob(str(out / "tfx" / "Trainer" / "model_run" / "*" / "train" /
                                     "events.out.tfevents.*")):
        tags.update(v.tag for e in tf.compat.v1.train.summary_iterator(path)
                    for v in e.summary.value)
    assert any(t.endswith("custom_image_summary") for t in tags), tags
    assert any(t.endswith("custom_histogram_summary") for t in tags), tags


def test_second_identical_run_is_cached_and_much_faster(two_runs):
    out, first, second, _, _ = two_runs
    assert sorted(second["cached"]) == sorted(set(COMPONENT_IDS) - RESOLVERS)
    # A loose bound: under pytest -n the test beside this one may slow either run.
    assert second["timings_s"]["total"] < 0.2 * first["timings_s"]["total"]
    assert second["eval"] == first["eval"]
    assert second["pushed"]["serving"] == first["pushed"]["serving"]
    assert os.listdir(out / "serving" / "imagepipe") == [
        os.path.basename(first["pushed"]["serving"])]
    second_stdout = (out.parent / "second_stdout.txt").read_text()
    assert "nothing   new: every step was a cache hit" in second_stdout


def _red_pixels(png) -> int:
    pixels = np.asarray(Image.open(png).convert("RGB")).astype(int)
    return int(((pixels[..., 0] > 170) & (pixels[..., 1] < 100) & (pixels[..., 2] < 100)).sum())


def test_progress_lines_name_every_component_epochs_and_cache_hits(two_runs):
    out, _, _, stdout, _ = two_runs
    done = [line.split()[1] for line in stdout.splitlines() if line.startswith("done ")]
    assert done == list(COMPONENT_IDS)
    assert sum(line.strip().startswith("epoch ") for line in stdout.splitlines()) == 10
    shards = re.findall(r"\n {10}ingest shard \d+/(\d+): (\d+) images", stdout)
    assert len(shards) == int(shards[0][0]) and sum(int(n) for _, n in shards) == 100
    second = (out.parent / "second_stdout.txt").read_text().splitlines()
    cached = [line.split()[1] for line in second if line.startswith("done ")
              and line.endswith("cached")]
    assert sorted(cached) == sorted(set(COMPONENT_IDS) - RESOLVERS)


def test_the_run_writes_a_report_with_every_picture(two_runs):
    out, _, _, stdout, _ = two_runs
    report = out / "report"
    assert f"report    {report / 'index.html'}" in stdout
    page = (report / "index.html").read_text()
    for name in ("gallery", "confusion_matrix", "per_class_accuracy", "training_curves",
                 "transformed_samples"):
        assert f'src="{name}.png"' in page
        with Image.open(report / f"{name}.png") as image:
            assert image.size[0] > 300 and len(image.convert("RGB").getcolors(1 << 20)) > 20


def test_the_gallery_uses_the_audits_predictions_which_agree_with_the_model(two_runs,
                                                                            tmp_path):
    from settings.config import PipelineConfig
    from report import collect
    out, first, _, _, _ = two_runs
    uris = collect.artifact_uris(PipelineConfig.from_values(output=str(out)))
    examples = first["data"]["examples_uri"]
    records = collect.eval_records(examples)
    labels = collect._parse(records)[1]
    audited = collect.audited_predictions(examples, uris["ModelBlessing"], labels)
    assert audited is not None and len(audited) == len(records) > 10
    np.testing.assert_array_equal(audited, collect._model_predictions(uris["Model"], records))
    # Not used: a reference whose labels are not the records', one that sampled a larger
    # split (its count is not the split's), and a missing one.
    content = json.loads((pathlib.Path(uris["ModelBlessing"]) / "monitoring"
                          / "reference.json").read_text())
    reference = tmp_path / "monitoring" / "reference.json"
    reference.parent.mkdir()
    for changed in ({"label": content["eval"]["label"][1:]},
                    {"count": content["eval"]["count"] + 1}):
        reference.write_text(json.dumps({**content, "eval": {**content["eval"], **changed}}))
        assert collect.audited_predictions(examples, str(tmp_path), labels) is None
    reference.write_text(json.dumps(content))
    assert collect.audited_predictions(examples, str(tmp_path), labels) is not None
    assert collect.audited_predictions(examples, str(tmp_path / "none"), labels) is None


def test_a_cached_rerun_rewrites_the_report_page_but_redraws_nothing(two_runs):
    out, _, second, _, _ = two_runs
    first = json.loads((out.parent / "first_report.json").read_text())
    now = {p.name: p.stat().st_mtime_ns for p in (out / "report").iterdir()}
    assert {"gallery.png", "training_curves.png", ".inputs.json"} <= set(first)
    for name in first:
        if name.endswith(".png") or name == ".inputs.json":
            assert now[name] == first[name], name
    assert now["index.html"] > first["index.html"]
    # The page shows the cached run's own times (the last test redraws on new inputs).
    page = (out / "report" / "index.html").read_text()
    assert f"total {second['timings_s']['total']:.1f}s" in page


def test_a_time_budget_caps_the_epochs_and_summary_records_them(two_runs, tmp_path):
    data = two_runs[4]
    # One step an epoch: 2,000 of them cannot fit in the ~20 s the other stages leave.
    summary, stdout = _run(data, tmp_path / "out", "--time-budget", "70s",
                           length=("--epochs", "2000", "--batch-size", "64"))
    training, plan = summary["training"], summary["plan"]
    cap = training["time_cap"]
    assert cap["planned_epochs"] == 2000 and 3 <= cap["epochs"] < 2000
    # Decided during the fit, after the timed epochs: it stopped there.
    assert training["epochs_run"] == cap["epochs"] and training["epochs_planned"] == 2000
    assert cap["first_epoch_s"] > 0 and cap["steady_epoch_s"] > 0
    # Decided after the timed epochs, or later where the host slowed down (the reason's end).
    assert (cap["reason"].startswith(f"{cap['epochs']} fit of 2000 planned epochs")
            or cap["reason"].endswith(f"so {cap['epochs']} fit"))
    # Re-sized on the run's clock at the fit's start: the budget less what the run took to
    # get there, and at least the plan's estimate for the stages after it.
    assert cap["before_fit_s"] > 0
    assert cap["cap_s"] <= 70 - cap["before_fit_s"] - plan["values"]["after_fit_s"] + 0.1
    assert cap["sized"].startswith(f"{cap['cap_s']:.0f} s to train: the 70 s budget less")
    assert plan["reasons"]["time_budget"].startswith("70 s minus about")
    assert "time budget: training capped at" in stdout
    assert all(part in stdout for part in cap["reason"].split("; "))  # and any recheck's


# Last in this file: it adds a run to the output folder the tests above inspect.
def test_a_worse_model_is_not_blessed_against_the_baseline_and_not_pushed(two_runs):
    out, first, _, _, data = two_runs
    # One step at a tiny learning rate: an untrained model, far below the first run's.
    worse, stdout = _run(data, out, "--train-steps", "1", "--learning-rate", "1e-7")
    assert worse["eval"]["baseline_accuracy"] == pytest.approx(first["eval"]["accuracy"])
    assert worse["eval"]["accuracy"] < first["eval"]["accuracy"] - 0.01
    assert worse["eval"]["blessed"] is False
    assert "accuracy change vs baseline" in worse["eval"]["reason"]
    verdict = worse["pushed"].pop("verdict")
    assert worse["pushed"] == {"serving": None, "tflite": None, "version": None,
                               "tflite_gate": None, "serving_check": None, "blocked": None,
                               "model_card": None}
    assert verdict["kind"] == "model", verdict
    assert "accuracy change vs baseline" in verdict["reason"] or "the Evaluator" in \
        verdict["reason"], verdict
    assert os.listdir(out / "serving" / "imagepipe") == [str(first["pushed"]["version"])]
    assert "NOT blessed" in stdout
    # The untrained model is wrong on most eval digits: the gallery shows them in red.
    assert _red_pixels(out / "report" / "gallery.png") > 100
    listed = imagepipe("runs", "--output", out, timeout=300)
    assert listed.returncode == 0, listed.stderr[-2000:]
    rows = listed.stdout.splitlines()[1:]
    assert len(rows) == 3, listed.stdout
    assert [r.split()[3] for r in rows] == ["yes", "yes", "no"]
    assert rows[0].split()[4] == str(first["pushed"]["version"]) and rows[2].split()[4] == "-"

