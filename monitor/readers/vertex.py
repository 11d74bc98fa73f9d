"""`vertex`: Vertex AI's request-response logging, exported from BigQuery as JSON lines.

An endpoint with request-response logging (PredictRequestResponseLoggingConfig)
writes a sample of its online predictions to the BigQuery table
`request_response_logging`, columns (schema v1): endpoint STRING,
deployed_model_id STRING, logging_time TIMESTAMP, request_id NUMERIC,
request_payload STRING REPEATED (one JSON instance each), response_payload
STRING REPEATED (one JSON prediction each). `bq extract
--destination_format NEWLINE_DELIMITED_JSON` (or a query's JSON export) writes a
row a line, repeated columns as arrays. Instances and predictions are those of
the deployed model's predict API (TF Serving's, for a TensorFlow model:
bodies.py). Whole bodies, as JSON text or objects (the v2 schema's JSON
columns), are read too. Ids are the request_id (FILE:LINE without one).
"""
import json
from typing import Iterable, Iterator, List, Optional, Sequence

from monitor.readers import bodies
from monitor.readers.lines import Line, each_object
from monitor.readers.registry import keys_of, reader
from monitor.records import BadRecord, Item

COLUMNS = frozenset({"request_payload", "response_payload", "deployed_model_id"})


@reader("vertex", sniff=lambda sample: len(keys_of(sample) & COLUMNS) >= 2)
def read_vertex(paths: Iterable[str], labels: Sequence[str] = ()) -> Iterator[Item]:
    """Records of every logged request, in order."""
    return each_object(paths, _row_records)


def _row_records(line: Line) -> List[Item]:
    row = line.value
    where = str(row.get("request_id") or line.id)
    try:
        request = _body(row.get("request_payload"), "instances")
        response = _body(row.get("response_payload"), "predictions")
    except (ValueError, TypeError) as e:
        return [BadRecord(where, f"unreadable payload: {e}")]
    if request is None and response is None:
        return [BadRecord(where, "no request_payload or response_payload")]
    return bodies.records(where, request, response)


def _body(column: object, key: str) -> Optional[dict]:
    """A payload column as a predict body: {key: [one item per element]} for a
    repeated column, the body itself for a whole one; None if empty."""
    if isinstance(column, (str, bytes)):
        column = json.loads(column)
    if not column:
        return None
    if isinstance(column, list):
        return {key: [json.loads(v) if isinstance(v, str) else v for v in column]}
    return bodies.as_body(column)
