"""`kserve`: KServe's payload logger, as JSON lines of CloudEvents.

KServe's logger (pkg/logger/worker.go) sends one CloudEvent (spec 1.0) per
request and one per response, with `type` org.kubeflow.serving.inference.request
or .response, the same `id` on both (the request id), extensions
inferenceservicename, namespace, component, endpoint, and the body as data
(KServe's documentation: "Inference Logger"). A sink that stores them as
CloudEvents JSON (structured mode) writes one event a line: {"specversion",
"type", "id", "source", "time", "datacontenttype", ..., "data": <body>} (or
"data_base64"). KServe's blob-store logger (pkg/logger/marshaller) writes its
LogRequest instead: {"ReqType", "Id", "Bytes": <base64 body>, ...}, a batch as a
JSON array; both are read. Bodies are the v1 or v2 protocol's (bodies.py).

A request and its response are paired by id across the window's files; a request
whose response does not come within PAIRING_WINDOW events is read alone (the
monitor scores it), as is a response without its request (no image).
"""
import base64
import collections
from typing import Iterable, Iterator, Optional, Sequence, Tuple

from monitor.readers import bodies
from monitor.readers.lines import json_lines
from monitor.readers.registry import keys_of, reader
from monitor.records import BadRecord, Item

REQUEST_TYPE = "org.kubeflow.serving.inference.request"
RESPONSE_TYPE = "org.kubeflow.serving.inference.response"
# Requests held while their response is awaited: the logger sends both within
# milliseconds, so a few thousand events cover any interleaving, and a log of
# requests alone (logger mode "request") never holds more than this many images.
PAIRING_WINDOW = 2000


def _is_event(sample) -> bool:
    event = sample.first_object or {}
    return str(event.get("type", event.get("ReqType", ""))).startswith(
        "org.kubeflow.serving.inference.") and bool(keys_of(sample) & {"id", "Id"})


@reader("kserve", sniff=_is_event)
def read_kserve(paths: Iterable[str], labels: Sequence[str] = ()) -> Iterator[Item]:
    """Records of every request/response pair, in the order their pairs complete."""
    pending = collections.OrderedDict()  # request id -> its body
    for line in json_lines(paths):
        if isinstance(line, BadRecord):
            yield line
            continue
        try:
            kind, event_id, body = _event(line.value)
        except (ValueError, TypeError) as e:
            yield BadRecord(line.id, str(e))
            continue
        if kind == REQUEST_TYPE:
            pending[event_id] = body
            while len(pending) > PAIRING_WINDOW:
                yield from bodies.records(*pending.popitem(last=False), None)
        elif event_id in pending:
            yield from bodies.records(event_id, pending.pop(event_id), body)
        else:
            yield from bodies.records(event_id, None, body)
    for event_id, request in pending.items():  # no response came: the monitor scores them
        yield from bodies.records(event_id, request, None)


def _event(event: dict) -> Tuple[str, str, dict]:
    """(type, id, body) of one CloudEvent or blob-store LogRequest."""
    kind = event.get("type", event.get("ReqType"))
    if kind not in (REQUEST_TYPE, RESPONSE_TYPE):
        raise ValueError(f"not a KServe inference event: type {kind!r}")
    event_id = event.get("id", event.get("Id"))
    if not event_id:
        raise ValueError("an event without an id")
    return kind, str(event_id), bodies.as_body(_data(event))


def _data(event: dict) -> Optional[object]:
    if "data" in event:
        return event["data"]
    encoded = event.get("data_base64", event.get("Bytes"))
    if encoded is None:
        raise ValueError("an event without data")
    return base64.b64decode(encoded)
