"""The `rest` reader on a proxy's JSON lines of TF Serving REST predict calls (the request
and response bodies of TF Serving's REST API documentation, row and column forms)."""
import base64
import json

import numpy as np

from monitor.readers.registry import detect_format, read_window
from monitor.records import BadRecord, Record


def test_row_and_column_form_calls_give_a_record_per_image(tmp_path, make_image):
    png = make_image(tmp_path / "x.png").read_bytes()
    b64 = {"b64": base64.b64encode(png).decode()}
    lines = [
        {"time": "2026-11-27T12:00:00Z", "model": "imagepipe", "version": "17",
         "request": {"signature_name": "serving_image", "instances": [{"image_bytes": b64}]},
         "response": {"predictions": [{"probabilities": [0.3, 0.7], "class_id": 1,
                                       "class_name": "c1"}]}},
        {"request": json.dumps({"signature_name": "serving_image",
                                "inputs": {"image_bytes": [b64, b64]}}),
         "response": json.dumps({"outputs": {"probabilities": [[0.9, 0.1], [0.2, 0.8]],
                                             "class_id": [0, 1]}})},
        {"request": {"instances": [b64]}},
        {"request": {"instances": [b64]}, "response": {"predictions": [1]}},
        {"response": {"predictions": [[0.5, 0.5]]}},
    ]
    path = tmp_path / "proxy.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert detect_format(str(path)) == "rest"
    items = {i.id.split(":")[-1]: i for i in read_window(str(path))}
    assert list(items) == ["1", "2[0]", "2[1]", "3", "4", "5"]
    assert all(isinstance(items[k], Record) and items[k].image == png for k in list(items)[:5])
    np.testing.assert_allclose(items["1"].probabilities, [0.3, 0.7])
    np.testing.assert_allclose(items["2[1]"].probabilities, [0.2, 0.8])
    assert items["3"].probabilities is None and items["3"].predicted is None
    assert (items["4"].probabilities, items["4"].predicted) == (None, 1)
    assert isinstance(items["5"], BadRecord) and "request" in items["5"].reason
