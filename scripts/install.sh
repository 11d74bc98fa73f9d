#!/usr/bin/env bash
# Create .venv and install the pinned TFX 1.16 stack plus imagepipe into it.
#
#   bash scripts/install.sh          # slow the first time, instant after (time and disk: docs/install.md)
#
# Idempotent: a stamp in .venv records a hash of every file that decides what
# gets installed. If the stamp matches, nothing runs. If it does not (first
# run, edited pins, an interrupted install), the install runs again, and pip
# only touches what is missing or different.
#
# Why three steps: tfx and ml-pipelines-sdk 1.16.0 declare Requires-Python
# <3.11, although the whole stack has cp311 wheels and runs on 3.11. Applying
# --ignore-requires-python to the whole resolve would hide real conflicts, so
# the dependencies resolve normally under constraints.txt, and only those two
# wheels go in with --no-deps --ignore-requires-python.
#
# A fourth step, after `pip check`: tflite-support's metadata writer, also with
# --no-deps. It pins protobuf<4 for its Task Library, which imagepipe never
# imports; the metadata writer it uses runs on the stack's protobuf 4.25. Its
# native module links libusb-1.0, which a root install adds with apt-get.
set -euo pipefail

cd "$(dirname "$0")/.."
VENV=.venv
PY=${PYTHON:-python3}
STAMP_INPUTS=(constraints.txt requirements.txt setup.py pyproject.toml scripts/install.sh)

die() { echo "install: error: $*" >&2; exit 2; }

command -v "$PY" >/dev/null 2>&1 || die "'$PY' not found; install Python 3.11 or set PYTHON=/path/to/python3.11"
ver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
case "$ver" in
  3.11) ;;
  *) die "imagepipe needs Python 3.11: the pinned stack (constraints.txt) has wheels for it alone; '$PY' is Python $ver. Set PYTHON=/path/to/python3.11." ;;
esac

want=$(cat "${STAMP_INPUTS[@]}" | "$PY" -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')
want="$want python$ver"
if [ -f "$VENV/.installed" ] && [ "$(cat "$VENV/.installed")" = "$want" ] && [ -x "$VENV/bin/imagepipe" ]; then
  exit 0
fi

if [ -x "$VENV/bin/python" ]; then
  have=$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo none)
  if [ "$have" != "$ver" ]; then
    echo "install: $VENV is Python $have, rebuilding it with Python $ver"
    rm -rf "$VENV"
  fi
fi

start=$(date +%s)
echo "install: setting up $VENV with Python $ver"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
# Some machines list local find-links/index folders that do not exist; pip
# warns about each one on every lookup. Drop those lines, keep everything else.
quiet_pip() { "${PIP[@]}" "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }
rm -f "$VENV/.installed"

# The TFLite metadata writer's native module needs libusb-1.0. Without it, TFLite
# files are pushed without embedded metadata (labels.txt stays beside them).
ensure_libusb() {
  if ldconfig -p 2>/dev/null | grep -q 'libusb-1\.0\.so\.0'; then return; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "install: adding libusb-1.0 (apt-get) for the TFLite metadata writer"
    apt-get install -y -q libusb-1.0-0 >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q libusb-1.0-0 >/dev/null; } \
      || echo "install: warning: apt-get could not install libusb-1.0-0"
  else
    echo "install: note: libusb-1.0 is missing; TFLite files will carry no embedded metadata" \
         "until it is installed (Debian/Ubuntu: sudo apt-get install libusb-1.0-0)"
  fi
}

echo "install: 1/4 dependencies, pinned by constraints.txt"
quiet_pip install -q -c constraints.txt -r requirements.txt
echo "install: 2/4 tfx and ml-pipelines-sdk 1.16.0 (no deps, ignoring their <3.11 marker)"
quiet_pip install -q -c constraints.txt --no-deps --ignore-requires-python \
  tfx==1.16.0 ml-pipelines-sdk==1.16.0
echo "install: 3/4 imagepipe itself, editable, with its test extra"
# With deps, unlike step 2: everything else is in place by now, so this resolve only adds
# the `test` extra (check-jsonschema and zizmor, for the CI workflow's test). pip checks
# Requires-Python only on what it downloads, so the tfx installed above is accepted.
quiet_pip install -q -c constraints.txt --no-build-isolation -e ".[test]"
# Clean but for tflite-support's own pins, which a re-install finds already in place.
if ! report=$("${PIP[@]}" check 2>&1); then
  others=$(grep -v '^tflite-support 0\.4\.4 ' <<<"$report" || true)
  if [ -n "$others" ]; then echo "$report" >&2; die "pip check found broken requirements"; fi
fi
echo "install: 4/4 tflite-support's TFLite metadata writer (no deps: see above)"
quiet_pip install -q -c constraints.txt --no-deps tflite-support
ensure_libusb

echo "$want" > "$VENV/.installed"
echo "install: done in $(( $(date +%s) - start ))s; $(du -sh "$VENV" | cut -f1) in $VENV"
