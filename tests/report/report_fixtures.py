"""A flowers run's summary with every report section, and the files a report shows.

Shapes as components/image_example_gen/data_health/ (ingest_report.json's `data_health`) and the
Evaluator's audit (audit.json) write them; the summary is folded from them by
report/trust.py, as build_summary does.
"""
import copy
import pathlib

import numpy as np
from PIL import Image, ImageDraw

from core.contract import DATA_HEALTH_KEY
from core.intervals import paired_difference, wilson
from components.image_evaluator.audit.slice_gap import slice_gap
from report import trust, uncertainty

CLASSES = ["daisy", "dandelion", "roses", "sunflowers", "tulips"]
COLOURS = {"daisy": (245, 245, 240), "dandelion": (250, 215, 40), "roses": (200, 30, 60),
           "sunflowers": (255, 180, 0), "tulips": (230, 90, 160)}

HEALTH = {
    "images": 3670,
    "duplicates": [{"kind": "exact", "paths": [f"roses/{i}_0fa2b1.jpg" for i in range(6)],
                    "labels": ["roses"] * 6},
                   {"kind": "near", "paths": ["daisy/5547758_eea9edfd54_n.jpg",
                                              "daisy/5547758_eea9edfd54_n_small.jpg"],
                    "labels": ["daisy", "daisy"]},
                   {"kind": "exact", "paths": ["tulips/8689672277_b289909f97_n.jpg",
                                               "tulips/8689672277_b289909f97_n (1).jpg"],
                    "labels": ["tulips", "tulips"]}],
    "label_conflicts": [{"kind": "exact", "paths": ["sunflowers/1044296388_912143e1d4.jpg",
                                                    "dandelion/1044296388_912143e1d4.jpg"],
                         "labels": ["sunflowers", "dandelion"]}],
    "leakage": {"count": 12, "share": 0.0163,
                "pairs": [{"eval": f"tulips/{i}.jpg", "train": [f"tulips/t{i}.jpg"],
                           "kind": "near"} for i in range(12)]},
    "class_counts": {"daisy": 633, "dandelion": 898, "roses": 641, "sunflowers": 699,
                     "tulips": 799},
    "imbalance": {"ratio": 1.42, "tiny_classes": [], "remedy": "none"},
    "dropped": [],
    "counts": {"exact_groups": 5, "near_groups": 3, "duplicate_images": 17,
               "conflict_groups": 1, "leaked": 12, "dropped": 0},
    "truncated": False,
}

SLICES = {"image/slice/size": {"small": {"accuracy": 0.68, "examples": 41},
                               "medium": {"accuracy": 0.84, "examples": 512},
                               "large": {"accuracy": 0.86, "examples": 181}},
          "image/slice/color": {"color": {"accuracy": 0.835, "examples": 730},
                                "grayscale": {"accuracy": 0.5, "examples": 4}},
          "image/slice/aspect": {"landscape": {"accuracy": 0.83, "examples": 610},
                                 "portrait": {"accuracy": 0.82, "examples": 98},
                                 "square": {"accuracy": 0.88, "examples": 26}}}
# The baseline on the same 734 images: both right on 590, only the candidate on 20,
# only the baseline on 13 (0.8311 against 0.8215).
PAIRED = {"examples": 734, "candidate_accuracy": 610 / 734, "baseline_accuracy": 603 / 734,
          "difference": 7 / 734, "interval": list(paired_difference(590, 20, 13, 111)),
          "confidence": 0.95, "method": "Newcombe hybrid score interval for paired "
          "proportions (Newcombe 1998, method 10)", "both": 590, "candidate_only": 20,
          "baseline_only": 13, "neither": 111}

AUDIT = {
    "examples": 734, "accuracy": 0.8311, "seconds": 41.5,
    "accuracy_interval": list(wilson(610, 734)), "baseline": PAIRED,
    "leakage": {"leaked": 12, "accuracy_without": 0.8128, "gain": 0.0183,
                "examples_without": 722, "interval": list(wilson(587, 722))},
    "suspects": {"method": "confident learning", "flagged": 9, "top": [
        {"path": f"{given}/{1000 + i}_a7f3c2.jpg", "given": given, "predicted": predicted,
         "score": 0.97 - i * 0.04, "thumbnail": f"audit/suspect_{i}.png"}
        for i, (given, predicted) in enumerate([("sunflowers", "dandelion"), ("roses", "tulips"),
                                                ("daisy", "dandelion"), ("tulips", "roses"),
                                                ("dandelion", "sunflowers"),
                                                ("tulips", "daisy")] * 3)]},
    "saliency": {"method": "grad-cam", "layer": "block_16_project", "images": [
        {"path": f"{actual}/{2000 + i}.jpg", "actual": actual, "predicted": predicted,
         "overlay": f"audit/saliency_{i}.png"}
        for i, (actual, predicted) in enumerate([("daisy", "daisy"), ("roses", "tulips"),
                                                 ("sunflowers", "sunflowers"),
                                                 ("tulips", "tulips"),
                                                 ("dandelion", "sunflowers"),
                                                 ("roses", "roses")])]},
    "robustness": {"examples": 256, "clean": 0.83, "mean": 0.7312, "fgsm": {
        "epsilon": 0.01, "accuracy": 0.412}, "corruptions": {
        name: {"1": 0.82 - d, "2": 0.78 - 2 * d, "3": 0.7 - 3 * d}
        for name, d in (("gaussian_noise", 0.06), ("gaussian_blur", 0.03),
                        ("brightness", 0.01), ("contrast", 0.02), ("jpeg", 0.0))}},
    "slices": slice_gap(0.8311, SLICES),
    "gates": {"max_leakage_gain": {"limit": 0.03, "value": 0.0183, "passed": True},
              "min_robust_accuracy": {"limit": 0.6, "value": 0.7312, "passed": True},
              "max_slice_gap": {"limit": 0.2, "value": 0.1511, "passed": True}},
    "blocked": [],
}

PLAN = {"values": {"model": "mobilenet_v2", "image_size": 224, "epochs": 8,
                   "train_steps": None, "batch_size": 32},
        "reasons": {"model": "given (--model)",
                    "image_size": "mobilenet_v2 on CPU: 224 px at most; data's most common "
                                  "side 240 px",
                    "epochs": "2,936 train images: about 30,000 examples in all, within 3-30 "
                              "epochs; pretrained features need fewer: at most 8"}}


def base_summary() -> dict:
    """A run's summary as older runs wrote it: no data health, no audit, no plan."""
    return {
        "data": {"path": "/data/flower_photos", "format": "folders", "classes": CLASSES,
                 "splits": {"train": 2936, "eval": 734}, "skipped": 0, "ignored": 1,
                 "empty_classes": [], "skipped_files": [], "examples_uri": "/o/Examples/1"},
        "eval": {"accuracy": 0.8311, "baseline_accuracy": 0.8207, "blessed": True,
                 "reason": "accuracy >= threshold 0.8 and >= baseline 0.8207 - 0.01",
                 "per_class": dict(zip(CLASSES, [0.86, 0.88, 0.74, 0.85, 0.79])),
                 "confusion_matrix": None},
        "pushed": {"serving": "/o/serving/flowers/3", "version": 3, "tflite": None,
                   "tflite_gate": None, "blocked": None, "serving_check": {
                       "ok": True, "reason": "loaded, replayed the warmup requests and "
                       "answered REST", "warmup_records": 102, "rest_requests": 32,
                       "p50_ms": 14.2, "p99_ms": 31.9}},
        "training": {"examples_per_s": 212.0, "first_epoch_s": 61.0, "epochs_run": 8},
        "timings_s": {"ImageExampleGen": 35.1, "Transform": 48.2, "Trainer": 612.4,
                      "Evaluator": 95.3, "Pusher": 21.7, "total": 830.5},
        "cached": [],
    }


# TFMA's figures: (accuracy, examples) overall, and per label id as text
FIGURES = {"candidate": (0.8311, 734), "baseline": (603 / 734, 734)}
LABEL_CELLS = {str(i): {"accuracy": a, "examples": n} for i, (a, n) in
               enumerate([(0.86, 126), (0.88, 180), (0.74, 128), (0.85, 140), (0.79, 160)])}


def uncertainty_fields(audit: dict) -> dict:
    """The `eval` fields summary.py adds from TFMA's counts and the audit."""
    return {**uncertainty.accuracy_fields(FIGURES), **uncertainty.leak_free_fields(audit),
            "per_class_interval": uncertainty.per_class_intervals(LABEL_CELLS, CLASSES),
            "baseline_difference": uncertainty.baseline_difference(audit, FIGURES)}


def full_summary(health: dict = HEALTH, audit: dict = AUDIT, threshold: float = 0.75) -> dict:
    """base_summary with the plan, data health, the audit's sections, the accuracies'
    counts and intervals, and a model card; `threshold` the accuracy threshold (0.75: out
    of the judged accuracy's 95% interval, 0.783-0.840)."""
    summary, health, audit = base_summary(), copy.deepcopy(health), copy.deepcopy(audit)
    summary["plan"] = copy.deepcopy(PLAN)
    summary["data_health"] = trust.data_health_section({DATA_HEALTH_KEY: health})
    summary.update(trust.audit_sections(audit))
    summary["eval"].update(trust.audit_eval_fields(audit, "/o/Evaluator/evaluation/7"))
    summary["eval"].update(uncertainty_fields(audit))
    summary["eval"]["threshold"] = uncertainty.threshold_check(summary["eval"], threshold)
    summary["pushed"]["model_card"] = "/o/serving/flowers/3/assets.extra/model_card.html"
    return summary


def flower(name: str, size: int = 96, seed: int = 0) -> np.ndarray:
    """A picture that looks like a photo at a glance: petals of the class colour on green."""
    rng = np.random.default_rng(seed)
    image = Image.new("RGB", (size, size), (40 + int(rng.integers(40)), 110, 50))
    draw = ImageDraw.Draw(image)
    centre = size / 2 + rng.normal(0, size / 10, 2)
    for angle in np.linspace(0, 2 * np.pi, 9)[:-1]:
        x, y = centre + size / 4 * np.array([np.cos(angle), np.sin(angle)])
        draw.ellipse([x - size / 7, y - size / 7, x + size / 7, y + size / 7],
                     fill=COLOURS[name])
    draw.ellipse([*(centre - size / 10), *(centre + size / 10)], fill=(90, 60, 20))
    return np.asarray(image)


def write_audit_images(folder: pathlib.Path, audit: dict = AUDIT) -> None:
    """The thumbnails and overlays audit.json names, under `folder` (the Evaluation's)."""
    (folder / "audit").mkdir(parents=True, exist_ok=True)
    for i, suspect in enumerate(audit["suspects"]["top"]):
        Image.fromarray(flower(suspect["given"], seed=i)).save(folder / suspect["thumbnail"])
    for i, item in enumerate(audit["saliency"]["images"]):
        image = flower(item["actual"], seed=50 + i).astype(float)
        yy, xx = np.mgrid[:96, :96]
        heat = np.exp(-((yy - 40) ** 2 + (xx - 55) ** 2) / 600.0)[..., None]
        overlay = image * (1 - 0.5 * heat) + np.array([255, 0, 0]) * 0.5 * heat
        Image.fromarray(overlay.astype(np.uint8)).save(folder / item["overlay"])


def write_report(folder: pathlib.Path, summary: dict) -> pathlib.Path:
    """The report's five charts, the audit's images and index.html, as build.py lays them out."""
    from report import charts
    from report.page import index_html
    folder.mkdir(parents=True, exist_ok=True)
    write_audit_images(folder)
    actual = [CLASSES[i % 5] for i in range(32)]
    predicted = [c if i % 3 else CLASSES[(i + 1) % 5] for i, c in enumerate(actual)]
    charts.gallery([flower(c, seed=i) for i, c in enumerate(actual)], actual, predicted,
                   str(folder / "gallery.png"))
    matrix = [[120 if i == j else 6 for j in range(5)] for i in range(5)]
    charts.confusion(matrix, CLASSES, str(folder / "confusion_matrix.png"))
    charts.per_class(summary["eval"]["per_class"], summary["eval"]["accuracy"],
                     str(folder / "per_class_accuracy.png"))
    charts.curves({"train": {"loss": {1: 1.2, 2: 0.7, 3: 0.5, 4: 0.4},
                             "accuracy": {1: 0.6, 2: 0.75, 3: 0.82, 4: 0.86}},
                   "validation": {"loss": {1: 0.9, 2: 0.6, 3: 0.55, 4: 0.5},
                                  "accuracy": {1: 0.7, 2: 0.79, 3: 0.82, 4: 0.83}}},
                  str(folder / "training_curves.png"), 2)
    charts.samples({c: [flower(c, seed=s) / 128.0 - 1 for s in range(6)] for c in CLASSES},
                   str(folder / "transformed_samples.png"))
    (folder / "model_card.html").write_text("<html><body>model card</body></html>")
    index = folder / "index.html"
    index.write_text(index_html(summary, [p.name for p in folder.glob("*.png")]))
    return index
