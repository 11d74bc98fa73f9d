"""The `kserve` reader on CloudEvents as KServe's payload logger sends them (its docs'
"Inference Logger" example events), written as structured-mode JSON lines."""
import base64
import json

import numpy as np
import pytest

from monitor.readers import kserve
from monitor.readers.registry import detect_format, read_window
from monitor.records import BadRecord, Record


def _event(kind, event_id, data, **extra):
    """One CloudEvent (spec 1.0) with KServe's extension attributes."""
    return {"specversion": "1.0", "type": f"org.kubeflow.serving.inference.{kind}",
            "source": "http://localhost:9081/", "id": event_id,
            "time": "2023-04-05T07:39:53.501752983Z", "datacontenttype": "application/json",
            "component": "predictor", "endpoint": "", "inferenceservicename": "imagepipe",
            "namespace": "default", "data": data, **extra}


def _write(path, events):
    path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in events))
    return path


@pytest.fixture
def png(tmp_path, make_image):
    return make_image(tmp_path / "x.png").read_bytes()


def test_requests_and_responses_pair_by_id_in_v1_and_v2(tmp_path, png):
    b64 = base64.b64encode(png).decode()
    v2_request = {"id": "r2", "inputs": [{"name": "image_bytes", "shape": [2], "datatype": "BYTES",
                                          "data": [b64, b64]}]}
    v2_response = {"model_name": "imagepipe", "id": "r2", "outputs": [
        {"name": "probabilities", "shape": [2, 2], "datatype": "FP32",
         "data": [0.25, 0.75, 0.9, 0.1]}]}
    path = _write(tmp_path / "events.jsonl", [
        _event("request", "a", {"instances": [{"image_bytes": {"b64": b64}}]}),
        _event("request", "b", {"instances": [{"b64": b64}]}),
        _event("response", "b", {"predictions": [{"probabilities": [0.4, 0.6], "class_id": 1}]}),
        _event("response", "a", {"predictions": [[0.9, 0.1]]}),
        _event("request", "r2", v2_request), _event("response", "r2", v2_response)])
    assert detect_format(str(path)) == "kserve"
    items = {i.id: i for i in read_window(str(path))}
    assert set(items) == {"a", "b", "r2[0]", "r2[1]"}
    assert all(isinstance(i, Record) and i.image == png for i in items.values())
    np.testing.assert_allclose(items["a"].probabilities, [0.9, 0.1])
    np.testing.assert_allclose(items["b"].probabilities, [0.4, 0.6])
    np.testing.assert_allclose(items["r2[1]"].probabilities, [0.9, 0.1])


def test_an_unanswered_request_is_read_alone_and_a_lone_response_without_image(tmp_path, png,
                                                                               monkeypatch):
    b64 = base64.b64encode(png).decode()
    monkeypatch.setattr(kserve, "PAIRING_WINDOW", 1)
    first = _write(tmp_path / "1.jsonl", [
        _event("request", "old", {"instances": [{"b64": b64}]}),
        _event("request", "late", {"instances": [{"b64": b64}]})])
    _write(tmp_path / "2.jsonl", [_event("response", "late", {"predictions": [[0.5, 0.5]]}),
                                  _event("response", "lost", {"predictions": [[0.2, 0.8]]})])
    items = list(read_window(str(tmp_path)))
    assert [(i.id, i.image is not None, i.probabilities is not None) for i in items] == [
        ("old", True, False), ("late", True, True), ("lost", False, True)]
    assert first.exists()


def test_blob_store_log_requests_and_base64_data_are_read(tmp_path, png):
    body = json.dumps({"instances": [{"b64": base64.b64encode(png).decode()}]}).encode()
    batch = [{"Url": "gs://logs/", "Bytes": base64.b64encode(body).decode(),
              "ContentType": "application/json", "ReqType": kserve.REQUEST_TYPE, "Id": "z",
              "InferenceService": "imagepipe", "Namespace": "default"}]
    response = _event("response", "z", None)
    del response["data"]
    response["data_base64"] = base64.b64encode(b'{"predictions": [[0.3, 0.7]]}').decode()
    path = _write(tmp_path / "blob.json", [json.dumps(batch), response])
    assert detect_format(str(path)) == "kserve"
    [item] = read_window(str(path))
    assert item.id == "z" and item.image == png
    np.testing.assert_allclose(item.probabilities, [0.3, 0.7])


def test_corrupt_lines_and_events_are_bad_records_naming_file_and_line(tmp_path, png):
    path = _write(tmp_path / "events.jsonl", [
        _event("request", "a", {"instances": [{"b64": "not base64!"}]}),
        "{truncated", _event("other", "x", {}),
        _event("request", "n", {"instances": [{"b64": base64.b64encode(png).decode()}]}),
        _event("response", "n", {"predictions": [[0.1, 0.9], [0.5, 0.5]]})])
    items = list(read_window(str(path), fmt="kserve"))
    assert all(isinstance(i, BadRecord) for i in items)
    # pairs come out as they complete; "a" has no response and comes out last
    assert [i.id for i in items] == [f"{path}:2", f"{path}:3", "n", "a"]
    assert "not JSON" in items[0].reason and "not a KServe" in items[1].reason
    assert "1 instance(s) in the request, 2 prediction(s)" in items[2].reason
    assert "not base64" in items[3].reason
