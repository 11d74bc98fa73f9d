"""The lock object a rollback takes in a bucket output without a local state folder (a
compiled pipeline's --pipeline-root); on local folders, which create it the same way."""
import json
import os
import time

import pytest

from core.storage import files
from rollback.bucket_lock import LOCK_OBJECT, STALE_S, bucket_lock
from core.errors import UsageError


def test_a_second_rollback_is_refused_naming_the_output_and_the_holder(tmp_path):
    output = str(tmp_path)
    with bucket_lock(output) as path:
        assert path == os.path.join(output, LOCK_OBJECT) and files.exists(path)
        with pytest.raises(UsageError, match=r"--output .*another imagepipe rollback is "
                                             r"using it \(host .*, pid \d+, started"):
            with bucket_lock(output):
                pass
        assert files.exists(path)  # the refused one left the holder's lock alone
    assert not files.exists(path)


def test_the_lock_goes_when_the_rollback_fails(tmp_path):
    with pytest.raises(RuntimeError):
        with bucket_lock(str(tmp_path)):
            raise RuntimeError("a write failed")
    assert not files.exists(os.path.join(str(tmp_path), LOCK_OBJECT))


def test_a_lock_left_by_a_killed_rollback_is_taken_over_after_a_while(tmp_path):
    path = os.path.join(str(tmp_path), LOCK_OBJECT)
    files.write_text(path, json.dumps({"host": "gone", "pid": 1,
                                       "started": time.time() - STALE_S - 1}))
    with bucket_lock(str(tmp_path)):
        assert json.loads(files.read_text(path))["pid"] == os.getpid()
    assert not files.exists(path)


def test_a_fresh_lock_whose_holder_cannot_be_read_is_respected(tmp_path):
    files.write_text(os.path.join(str(tmp_path), LOCK_OBJECT), "not json")
    with pytest.raises(UsageError, match="holder unknown"):
        with bucket_lock(str(tmp_path)):
            pass
