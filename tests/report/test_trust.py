"""summary.json's trust sections from the files other stages write, and without them."""
import copy
import json

from core.contract import (AUDIT_FILE, DATA_HEALTH_KEY, INGEST_REPORT_FILE,
                           MODEL_CARD_HTML, read_ingest_report)
from report import build, trust
from tests.report.report_fixtures import AUDIT, HEALTH, write_audit_images


def test_data_health_is_read_from_the_ingest_report_and_kept_small(tmp_path):
    health = copy.deepcopy(HEALTH)
    health["duplicates"] = [{"kind": "near", "paths": [f"c/{i}_{j}.jpg" for j in range(50)],
                             "labels": ["c"] * 50} for i in range(500)]
    health["class_counts"] = {f"class_{i}": 10 for i in range(1000)}
    health["imbalance"]["tiny_classes"] = [f"class_{i}" for i in range(300)]
    (tmp_path / INGEST_REPORT_FILE).write_text(json.dumps({DATA_HEALTH_KEY: health}))
    section = trust.data_health_section(read_ingest_report(str(tmp_path)))
    assert section["counts"] == HEALTH["counts"] and section["images"] == 3670
    assert section["leakage"]["count"] == 12 and section["leakage"]["share"] == 0.0163
    assert len(section["duplicates"]) == trust.EXAMPLE_GROUPS
    assert all(len(g["paths"]) == trust.PATHS_PER_GROUP for g in section["duplicates"])
    assert len(section["leakage"]["pairs"]) == trust.EXAMPLE_GROUPS
    assert len(section["imbalance"]["tiny_classes"]) == trust.TINY_CLASSES
    assert len(json.dumps(section)) < 4000  # data.per_class has the class counts


def test_the_audit_gives_its_sections_and_the_eval_fields(tmp_path):
    (tmp_path / AUDIT_FILE).write_text(json.dumps(AUDIT))
    audit = trust.read_audit(str(tmp_path))
    sections = trust.audit_sections(audit)
    assert sections["robustness"] == AUDIT["robustness"]
    assert len(sections["suspects"]["top"]) == trust.AUDIT_IMAGES
    assert sections["suspects"]["flagged"] == 9
    assert sections["saliency"]["images"][1]["overlay"] == "audit/saliency_1.png"
    assert sections["slices"]["worst"]["value"] == "small" and sections["slices"]["cut"] == []
    assert list(sections["slices"]["by_feature"]["image/slice/size"]) == [
        "small", "medium", "large"]  # the least accurate first
    fields = trust.audit_eval_fields(audit, str(tmp_path))
    assert fields["accuracy_without_leaked"] == 0.8128 and fields["leakage_gain"] == 0.0183
    assert fields["leaked"] == 12 and fields["audit_blocked"] == []
    assert fields["gates"]["max_slice_gap"]["passed"] is True
    assert fields["audit"] == {"uri": str(tmp_path), "examples": 734, "accuracy": 0.8311,
                               "seconds": 41.5}


def test_many_slice_values_keep_the_worst():
    values = {str(i): {"accuracy": i / 100, "examples": 30} for i in range(100)}
    slices = trust.audit_sections({"slices": {"by_feature": {"image/group": values}}})["slices"]
    assert list(slices["by_feature"]["image/group"]) == [str(i) for i in range(20)]
    assert slices["cut"] == ["image/group"]


def test_absent_inputs_give_no_section(tmp_path):
    assert trust.data_health_section({"splits": {}}) is None  # an older ingest report
    assert trust.read_audit(str(tmp_path)) is None  # an Evaluator without the audit
    assert trust.audit_sections(None) == {"robustness": None, "slices": None,
                                          "suspects": None, "saliency": None}
    assert set(trust.audit_eval_fields(None, None).values()) == {None}
    partial = trust.audit_sections({"robustness": AUDIT["robustness"]})  # a part missing
    assert partial["robustness"] and partial["suspects"] is None and partial["slices"] is None
    assert trust.model_card(None) is None
    assert trust.model_card(str(tmp_path)) is None  # pushed before model cards


def test_the_model_card_and_audit_images_are_copied_beside_the_page(tmp_path):
    serving = tmp_path / "serving" / "3"
    (serving / "assets.extra").mkdir(parents=True)
    (serving / "assets.extra" / MODEL_CARD_HTML).write_text("<html>card</html>")
    card = trust.model_card(str(serving))
    assert card == str(serving / "assets.extra" / MODEL_CARD_HTML)
    report = tmp_path / "report"
    build._copy_model_card(card, str(report / MODEL_CARD_HTML))
    assert (report / MODEL_CARD_HTML).read_text() == "<html>card</html>"
    write_audit_images(tmp_path / "evaluation")
    build._copy_audit(str(tmp_path / "evaluation"), str(report / "audit"))
    assert (report / AUDIT["suspects"]["top"][0]["thumbnail"]).stat().st_size > 100
    build._copy_audit(None, str(report / "audit"))  # a later run without an audit
    build._copy_model_card(None, str(report / MODEL_CARD_HTML))
    assert sorted(p.name for p in report.iterdir()) == []
