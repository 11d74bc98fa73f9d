"""The `vertex` reader on rows of Vertex AI's request_response_logging BigQuery table, as
`bq extract --destination_format NEWLINE_DELIMITED_JSON` writes them (schema v1:
request_payload and response_payload are REPEATED STRING, a JSON instance each)."""
import base64
import json

import numpy as np

from monitor.readers.registry import detect_format, read_window
from monitor.records import BadRecord, Record


def _row(request_id, instances, predictions):
    return {"endpoint": "projects/1/locations/us-central1/endpoints/2",
            "deployed_model_id": "3", "logging_time": "2026-11-27 12:00:00.123456 UTC",
            "request_id": request_id,
            "request_payload": [json.dumps(i) for i in instances],
            "response_payload": [json.dumps(p) for p in predictions]}


def test_each_instance_is_a_record_with_its_prediction(tmp_path, make_image):
    png = make_image(tmp_path / "x.png").read_bytes()
    instance = {"image_bytes": {"b64": base64.b64encode(png).decode()}}
    rows = [_row("1001", [instance], [{"probabilities": [0.2, 0.8], "class_id": 1,
                                       "class_name": "c1"}]),
            _row("1002", [instance, instance], [[0.6, 0.4], [0.1, 0.9]]),
            _row("1003", [instance], []),
            {**_row("1004", [], []), "request_payload": json.dumps({"instances": [instance]}),
             "response_payload": {"predictions": [[0.5, 0.5]]}},
            _row("1005", [{"image_bytes": {"b64": "%%%"}}], [[1.0, 0.0]])]
    path = tmp_path / "export.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n")
    assert detect_format(str(path)) == "vertex"
    items = {i.id: i for i in read_window(str(path))}
    assert list(items) == ["1001", "1002[0]", "1002[1]", "1003", "1004", "1005", f"{path}:6"]
    assert all(isinstance(items[k], Record) and items[k].image == png
               for k in ("1001", "1002[0]", "1003", "1004"))
    np.testing.assert_allclose(items["1001"].probabilities, [0.2, 0.8])
    np.testing.assert_allclose(items["1002[1]"].probabilities, [0.1, 0.9])
    assert items["1003"].probabilities is None  # scored by the monitor
    assert isinstance(items["1005"], BadRecord) and "not base64" in items["1005"].reason
    assert isinstance(items[f"{path}:6"], BadRecord)
