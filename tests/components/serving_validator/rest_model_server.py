"""A stand-in for the tensorflow_model_server binary in tests: its flags and REST API.

    python rest_model_server.py --port=P --rest_api_port=R --model_name=NAME \
        --model_base_path=BASE

No machine here has the C++ binary, so the tests of `--model-server` run this:
it takes the binary's flags, loads BASE's highest numbered version with
TensorFlow, replays the version's warmup records as TF Serving does before a
version is AVAILABLE, and then serves TF Serving's REST API over HTTP on
127.0.0.1: `GET /v1/models/NAME` (the version's state) and
`POST /v1/models/NAME:predict` (row format, answered by serving_worker.rest_predict).
"""
import argparse
import http.server
import json
import os

import tensorflow as tf

from components.serving_validator.serving_worker import replay, rest_predict


def _handler(name: str, loaded):
    status = json.dumps({"model_version_status": [{"version": "1", "state": "AVAILABLE"}]})

    class Handler(http.server.BaseHTTPRequestHandler):
        def _send(self, code: int, body: str):
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())

        def do_GET(self):  # noqa: N802 (http.server's API)
            self._send(200 if self.path == f"/v1/models/{name}" else 404, status)

        def do_POST(self):  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            if self.path != f"/v1/models/{name}:predict":
                return self._send(404, json.dumps({"error": "no such model"}))
            return self._send(200, rest_predict(loaded, body))

        def log_message(self, *args):  # quiet, as the server is by default
            pass

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    for flag in ("--port", "--rest_api_port", "--model_name", "--model_base_path"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    version = max(os.listdir(args.model_base_path), key=int)
    model_dir = os.path.join(args.model_base_path, version)
    loaded = tf.saved_model.load(model_dir)
    replay(loaded, os.path.join(model_dir, "assets.extra", "tf_serving_warmup_requests"))
    server = http.server.HTTPServer(("127.0.0.1", int(args.rest_api_port)),
                                    _handler(args.model_name, loaded))
    server.serve_forever()


if __name__ == "__main__":
    main()
