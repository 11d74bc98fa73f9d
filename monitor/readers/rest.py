"""`rest`: a sidecar's or proxy's log of TF Serving REST traffic, one JSON line per call:
{"request": <predict request body>, "response": <its response body>}, and optional
"time", "model", "version" (bodies as objects or as JSON text; bodies.py reads
them). Ids are FILE:LINE, or FILE:LINE[i] for the i-th image of a batch."""
from typing import Iterable, Iterator, List, Sequence

from monitor.readers import bodies
from monitor.readers.lines import Line, each_object
from monitor.readers.registry import keys_of, reader
from monitor.records import BadRecord, Item


@reader("rest", sniff=lambda sample: "request" in keys_of(sample))
def read_rest(paths: Iterable[str], labels: Sequence[str] = ()) -> Iterator[Item]:
    """Records of every logged call, in order."""
    return each_object(paths, _call_records)


def _call_records(line: Line) -> List[Item]:
    try:
        request = bodies.as_body(line.value["request"])
        response = line.value.get("response")
        response = None if response is None else bodies.as_body(response)
    except (KeyError, ValueError, TypeError) as e:
        return [BadRecord(line.id, f"not a request/response line: {type(e).__name__}: {e}")]
    return bodies.records(line.id, request, response)
