"""The span window on real folders: which spans are ready, --span, and the window's record."""
import os
import time

import pytest

from components.image_example_gen import span_window
from components.image_example_gen.spans import SpanPatternError
from settings.config import PipelineConfig

AN_HOUR_AGO = time.time() - 3600


def _span(root, name, ready=True, files=("0/a.png", "1/b.png")):
    """A span folder; `ready`: with _SUCCESS, else files written just now (still arriving)."""
    for relpath in files:
        path = root / name / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"png " + relpath.encode())
    (root / name).mkdir(parents=True, exist_ok=True)
    if ready:
        (root / name / span_window.SUCCESS_FILE).write_bytes(b"")
    return root / name


def _age(folder, when=AN_HOUR_AGO):
    """Every file under `folder` last modified at `when`, as after a finished upload."""
    for parent, _, names in os.walk(folder):
        for name in names:
            os.utime(os.path.join(parent, name), (when, when))


def _resolve(pattern, **flags):
    return span_window.resolve(str(pattern), PipelineConfig.from_values(data=str(pattern),
                                                                        **flags).ingest_options())


def _numbers(window):
    return [s.span.number for s in window.spans]


def test_a_span_still_arriving_is_left_out_and_said_why(tmp_path, capsys):
    _span(tmp_path, "s1")
    _span(tmp_path, "s2", ready=False)
    window = _resolve(tmp_path / "s{SPAN}")
    assert _numbers(window) == [1] and window.previous is None  # nothing before span 1
    [left] = window.left_out
    assert left.span.number == 2 and "_SUCCESS" in left.reason and "--span-quiet" in left.reason
    assert "span 2 left out, not ready" in capsys.readouterr().out


def test_a_span_is_ready_with_success_or_once_quiet(tmp_path):
    _span(tmp_path, "s1")
    _span(tmp_path, "s2", ready=False)
    _age(_span(tmp_path, "s3", ready=False))
    window = _resolve(tmp_path / "s{SPAN}")
    assert _numbers(window) == [1, 3] and [s.span.number for s in window.left_out] == [2]
    assert window.previous.number == 2  # the span before the newest, ready or not
    assert _numbers(_resolve(tmp_path / "s{SPAN}", span_quiet=0)) == [1, 2, 3]
    (tmp_path / "s2" / "_SUCCESS").write_bytes(b"")
    assert _numbers(_resolve(tmp_path / "s{SPAN}")) == [1, 2, 3]


def test_an_empty_span_folder_is_not_ready_even_with_no_quiet_time(tmp_path):
    _span(tmp_path, "s1")
    (tmp_path / "s2").mkdir()
    window = _resolve(tmp_path / "s{SPAN}", span_quiet=0)
    assert _numbers(window) == [1] and "no files yet" in window.left_out[0].reason


def test_no_ready_span_fails_naming_data_and_the_rule(tmp_path):
    _span(tmp_path, "s1", ready=False)
    with pytest.raises(SpanPatternError, match=r"--data .*no span is ready.*span 1") as error:
        _resolve(tmp_path / "s{SPAN}")
    assert "_SUCCESS" in str(error.value) and "--span-quiet" in str(error.value)


def test_train_spans_counts_ready_spans_only(tmp_path):
    for name in ("s1", "s2", "s3"):
        _span(tmp_path, name)
    _span(tmp_path, "s4", ready=False)
    assert _numbers(_resolve(tmp_path / "s{SPAN}", train_spans=2)) == [2, 3]


def test_span_ends_the_window_and_later_spans_wait(tmp_path):
    for name in ("s1", "s2", "s3"):
        _span(tmp_path, name)
    window = _resolve(tmp_path / "s{SPAN}", span=2)
    assert _numbers(window) == [1, 2] and window.newest.number == 2 and not window.left_out


def test_a_missing_span_fails_naming_the_flag(tmp_path):
    _span(tmp_path, "s1")
    _span(tmp_path, "s3")
    with pytest.raises(SpanPatternError, match=r"--span 2: .* has no span 2 \(it has 1, 3\)"):
        _resolve(tmp_path / "s{SPAN}", span=2)


def test_a_span_not_ready_fails_naming_the_flag_and_why(tmp_path):
    _span(tmp_path, "s1")
    _span(tmp_path, "s2", ready=False)
    with pytest.raises(SpanPatternError, match=r"--span 2: span 2 .* is not ready: no _SUCCESS"):
        _resolve(tmp_path / "s{SPAN}", span=2)


def test_a_version_still_arriving_leaves_the_span_at_its_last_ready_version(tmp_path):
    _span(tmp_path / "1", "v1")
    _span(tmp_path / "1", "v2", ready=False)
    window = _resolve(tmp_path / "{SPAN}" / "v{VERSION}")
    assert window.newest.version == 1 and window.left_out[0].span.version == 2


def test_a_local_file_span_waits_out_the_quiet_time(tmp_path):
    (tmp_path / "span-1.npz").write_bytes(b"npz")
    (tmp_path / "span-2.npz").write_bytes(b"np")
    _age(tmp_path)
    (tmp_path / "span-2.npz").write_bytes(b"npz, still being written")
    window = _resolve(tmp_path / "span-{SPAN}.npz")
    assert _numbers(window) == [1] and window.left_out[0].span.number == 2


def test_the_marker_arriving_later_changes_no_fingerprint(tmp_path):
    _age(_span(tmp_path, "s1", ready=False))
    before = _resolve(tmp_path / "s{SPAN}")
    (tmp_path / "s1" / "_SUCCESS").write_bytes(b"")
    assert _resolve(tmp_path / "s{SPAN}").fingerprint() == before.fingerprint()
    (tmp_path / "s1" / "0" / "c.png").write_bytes(b"png")
    assert _resolve(tmp_path / "s{SPAN}").fingerprint() != before.fingerprint()


def test_the_window_travels_as_json_unchanged(tmp_path):
    _span(tmp_path, "s1")
    _span(tmp_path, "s2", ready=False)
    _span(tmp_path, "s3")
    window = _resolve(tmp_path / "s{SPAN}")
    assert span_window.SpanWindow.from_json(window.to_json()) == window
    assert window.spans[0].newest_ns == os.stat(tmp_path / "s1" / "1" / "b.png").st_mtime_ns
