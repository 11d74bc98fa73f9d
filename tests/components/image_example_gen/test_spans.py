"""Span patterns: what `--data` with {SPAN} and {VERSION} matches, on real folders."""
import pytest

from components.image_example_gen import spans


def _folders(root, *names):
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "x.png").write_bytes(b"png")


def test_lists_spans_in_number_order_not_name_order(tmp_path):
    _folders(tmp_path, "span-2", "span-10", "span-1", "other")
    found = spans.list_spans(str(tmp_path / "span-{SPAN}"))
    assert [s.number for s in found] == [1, 2, 10]
    assert found[0].root == str(tmp_path / "span-1")


def test_a_span_is_its_latest_version(tmp_path):
    _folders(tmp_path, "1/v1", "1/v3", "1/v2", "2/v1")
    found = spans.list_spans(str(tmp_path / "{SPAN}" / "v{VERSION}"))
    assert [(s.number, s.version) for s in found] == [(1, 3), (2, 1)]
    assert found[0].root.endswith("1/v3")


def test_fixed_parts_after_the_span(tmp_path):
    _folders(tmp_path, "3/images", "4/images", "5/notes")
    found = spans.list_spans(str(tmp_path / "{SPAN}" / "images"))
    assert [s.number for s in found] == [3, 4]


def test_window_takes_the_latest_n(tmp_path):
    _folders(tmp_path, "s1", "s2", "s3")
    pattern = str(tmp_path / "s{SPAN}")
    assert [s.number for s in spans.window(pattern, 2)] == [2, 3]
    assert [s.number for s in spans.window(pattern, 0)] == [1, 2, 3]
    assert list(spans.candidates(pattern)) == [1, 2, 3]


@pytest.mark.parametrize("pattern, words", [
    ("span-{SPAN}-{SPAN}", "exactly once"), ("v{VERSION}", "exactly once"),
    ("span-{SPAN}/*", "wildcards")])
def test_refuses_patterns_naming_the_flag(tmp_path, pattern, words):
    with pytest.raises(spans.SpanPatternError, match=words) as error:
        spans.list_spans(str(tmp_path / pattern))
    assert "--data" in str(error.value)


def test_no_match_says_what_span_means(tmp_path):
    _folders(tmp_path, "spanA")
    with pytest.raises(spans.SpanPatternError, match="no span matches"):
        spans.list_spans(str(tmp_path / "span{SPAN}"))
