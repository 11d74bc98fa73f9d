"""The report page and the run's last lines: verdicts first, a section per check."""
import copy

from report.console import format_summary
from report.page import index_html
from tests.report.report_fixtures import AUDIT, base_summary, full_summary

SECTIONS = ('id="data-health"', 'id="suspects"', 'id="saliency"', 'id="robustness"',
            'id="slices"')


def test_the_page_opens_with_the_overall_verdict_then_the_plan_and_serving_check():
    page = index_html(full_summary())
    assert page.index("verdict overall warn") < page.index('class="header"')
    assert "⚠ Blessed, pushed as version 3; look at: data health, leakage, suspected label " \
           "errors" in page
    for shown in ("mobilenet_v2 <span class='why'>— given (--model)",  # the plan, and why
                  "224 px <span class='why'>— mobilenet_v2 on CPU: 224 px at most",
                  "8 <span class='why'>— 2,936 train images",
                  "✓ Serving check passed: 102 warmup requests replayed",
                  '<a href="model_card.html">model card</a>',
                  "0.8128 without 12 leaked eval images (n=722, 95% CI 0.783–0.840); 0.8311 "
                  "with them (n=734, 95% CI 0.802–0.856)",
                  "candidate − baseline +0.0095 (95% CI −0.0062 to +0.0255, paired on the "
                  "same 734 eval images); baseline 0.8207"):
        assert shown in page
    assert 'src="gallery.png"' in page and "total 830.5s" in page  # as before


def test_each_section_starts_with_its_verdict():
    page = index_html(full_summary())
    for section in SECTIONS:
        start = page.index(section)
        assert page.index('class="verdict', start) < page.index("</h2>", start) + 40, section
    assert "⚠ 12 eval images have a copy in train; accuracy without them 0.813 (−0.018)" in page
    assert "⚠ 3,670 images: 8 duplicate groups (17 images), 1 label conflict" in page
    assert ("✓ Worst slice size=small: 0.680 on 41 images (95% CI 0.530–0.804), 0.151 below "
            "overall 0.831; 0.027 below at the upper bound of its 95% CI") in page
    assert "ℹ Where the model looked (grad-cam, layer block_16_project)" in page
    assert 'src="audit/suspect_0.png"' in page and 'src="audit/saliency_1.png"' in page
    assert page.index("audit/saliency_1.png") < page.index("audit/saliency_0.png")  # wrong first
    assert "<b>small (worst)</b>" in page and "FGSM attack at ε 0.01: 0.412" in page


def test_a_failed_gate_fails_the_overall_verdict():
    audit = copy.deepcopy(AUDIT)
    audit["gates"]["max_slice_gap"] = {"limit": 0.1, "value": 0.1511, "passed": False}
    page = index_html(full_summary(audit=audit))
    assert "✗ Blessed, pushed as version 3; failed: slices" in page
    assert "0.027 below at the upper bound of its 95% CI, over the limit of 0.100" in page


def test_an_older_run_without_plan_health_or_audit_still_renders():
    summary = base_summary()
    summary["eval"].update(blessed=False, reason="accuracy 0.5000 < threshold 0.8")
    summary["pushed"].update(serving=None, version=None, serving_check=None)
    page = index_html(summary, [])
    assert "✗ Not blessed: accuracy 0.5000 &lt; threshold 0.8" in page
    assert not any(section in page for section in SECTIONS)
    assert "not run (not blessed)" in page and "<img" not in page


def test_a_leaked_image_with_many_train_copies_says_how_many_more():
    summary = full_summary()
    pair = summary["data_health"]["leakage"]["pairs"][0]
    pair.update(train=["blank/1.png", "blank/2.png"], copies=300)
    assert "= train blank/1.png, blank/2.png (+298 more)</li>" in index_html(summary)
    del pair["copies"]  # an older report: no count, nothing more to say
    assert "= train blank/1.png, blank/2.png</li>" in index_html(summary)


def test_names_from_the_data_are_escaped():
    summary = full_summary()
    summary["suspects"]["top"][0]["given"] = "<script>x</script>"
    assert "<script>x" not in index_html(summary)


def test_the_run_prints_a_short_line_per_check():
    lines = format_summary(full_summary()).splitlines()
    checks = {line[:10].strip(): line[10:] for line in lines}
    assert checks["health"] == "3,670 images: 8 duplicate groups (17 images), 1 label conflict"
    assert checks["leakage"] == ("12 eval images have a copy in train; accuracy without them "
                                 "0.813 (-0.018)")
    assert checks["suspects"] == "9 eval images may be mislabelled (confident learning)"
    assert checks["accuracy"].startswith("0.8128 without 12 leaked eval images (n=722, "
                                         "95% CI 0.783-0.840) - blessed")  # judged, first
    assert checks[""] == "0.8311 with them (n=734, 95% CI 0.802-0.856)"
    assert checks["baseline"].startswith("candidate - baseline +0.0095 (95% CI -0.0062 to ")
    assert checks["classes"] == ("least accurate of 5: roses 0.7400 (n=128, 95% CI "
                                 "0.660-0.810), tulips 0.7900 (n=160, 95% CI 0.718-0.844)")
    assert checks["robust"].startswith("accuracy 0.830 clean (n=256), 0.731 mean under 5 "
                                       "corruptions")
    assert checks["slices"].startswith("worst slice size=small: 0.680 on 41 images")
    assert all(line.isascii() and len(line) < 160 for line in lines)
    assert not {"health", "leakage", "robust"} & {
        line[:10].strip() for line in format_summary(base_summary()).splitlines()}


def test_a_gate_without_a_limit_only_informs():
    audit = copy.deepcopy(AUDIT)
    for gate in audit["gates"].values():
        gate.update(limit=None, passed=True)
    page = index_html(full_summary(audit=audit))
    assert "ℹ Worst slice size=small: 0.680 on 41 images (95% CI 0.530–0.804)" in page
    assert "ℹ Accuracy" in page and "✓ Accuracy" not in page


def test_a_blocked_push_says_so_where_the_serving_check_would_be():
    summary = full_summary()
    summary["pushed"] = {**summary["pushed"], "serving_check": None,
                         "blocked": "the newest span drifted"}
    page = index_html(summary)
    assert "not run: the push was blocked (the newest span drifted)" in page
    assert "not run (not blessed)" not in page


def test_a_run_whose_every_step_was_cached_says_nothing_new_was_made():
    summary = full_summary()
    summary["cached"] = [node for node in summary["timings_s"] if node != "total"]
    lines = format_summary(summary).splitlines()
    assert lines[-2].startswith("nothing   new: every step was a cache hit")
    assert not any(line.startswith("nothing") for line in format_summary(
        full_summary()).splitlines())
