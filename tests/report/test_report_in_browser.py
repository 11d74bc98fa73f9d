"""The report in a real browser: headless Chromium at 1,400 px, nothing overlapping.

A script added to a copy of the page measures every heading, paragraph, table
cell, list item, image and caption once the page (images included) has
loaded, and writes what it finds into the DOM, which `--dump-dom` prints:
no screenshot comparison, no DevTools connection to keep alive.

Needs /usr/bin/chromium (Debian's `apt-get install -y chromium`); skipped
without it. IMAGEPIPE_REPORT_SCREENSHOT=/path/shot.png also saves a
full-page screenshot to look at.
"""
import html
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile

import pytest

from tests.report.report_fixtures import full_summary, write_report

CHROMIUM = "/usr/bin/chromium"
WIDTH = 1400
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-device-scale-factor=1", "--virtual-time-budget=10000")

pytestmark = [pytest.mark.integration,  # a real headless browser, started per test
              pytest.mark.skipif(
                  not os.path.exists(CHROMIUM),
                  reason=f"{CHROMIUM} is absent: install Chromium to run the report's browser "
                         "check (Debian: apt-get install -y chromium)")]

LAYOUT_CHECK = """<script>
window.addEventListener("load", () => {
  const els = [...document.querySelectorAll("h1,h2,h3,p,th,td,li,img,figcaption")];
  const boxes = els.map(e => e.getBoundingClientRect());
  const name = e => e.tagName.toLowerCase() + " " +
      (e.getAttribute("src") || e.textContent).trim().slice(0, 50);
  const overlaps = [], overflows = [], broken = [];
  for (let i = 0; i < els.length; i++) {
    const a = boxes[i];
    if (els[i].tagName !== "IMG" && els[i].scrollWidth > els[i].clientWidth + 1)
      overflows.push(name(els[i]));
    if (els[i].tagName === "IMG" && !(els[i].complete && els[i].naturalWidth > 0))
      broken.push(name(els[i]));
    for (let j = i + 1; j < els.length; j++) {
      if (els[i].contains(els[j]) || els[j].contains(els[i])) continue;
      const b = boxes[j];
      const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (x > 1 && y > 1) overlaps.push([name(els[i]), name(els[j])]);
    }
  }
  const out = document.createElement("pre");
  out.id = "layout-check";
  out.textContent = JSON.stringify({overlaps, overflows, broken, measured: els.length,
      width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight});
  document.body.appendChild(out);
});
</script>"""


def _chromium(*args: str, timeout: float = 90) -> str:
    """Runs Chromium once with a fresh profile; its whole process group is always killed."""
    profile = tempfile.mkdtemp(prefix="imagepipe-chromium-")
    process = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               start_new_session=True)  # its own group: renderers included
    try:
        return process.communicate(timeout=timeout)[0]
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.communicate()
        shutil.rmtree(profile, ignore_errors=True)


def _layout(index) -> dict:
    checked = index.with_name("layout_check.html")
    checked.write_text(index.read_text().replace("</body>", LAYOUT_CHECK + "</body>"))
    dom = _chromium("--dump-dom", f"--window-size={WIDTH},1000", checked.as_uri())
    found = re.search(r'<pre id="layout-check">(.*?)</pre>', dom, re.S)
    assert found, f"the layout script did not run; Chromium printed: {dom[-500:]}"
    return json.loads(html.unescape(found.group(1)))


def test_report_at_1400_px_has_no_overlapping_or_overflowing_elements(tmp_path):
    index = write_report(tmp_path / "report", full_summary())
    layout = _layout(index)
    assert layout["measured"] > 100  # the sections are there to be measured
    assert layout["broken"] == []  # every picture and audit image is beside the page
    assert layout["overlaps"] == []
    assert layout["overflows"] == []
    assert layout["width"] <= WIDTH  # no sideways scrolling
    shot = os.environ.get("IMAGEPIPE_REPORT_SCREENSHOT")
    if shot:
        _chromium(f"--screenshot={shot}", f"--window-size={WIDTH},{layout['height']}",
                  index.as_uri())
        assert os.path.getsize(shot) > 10_000
