"""Take the README's screenshots with headless Chromium (docs/img/*.png).

Usage: python scripts/screenshots.py [--ui http://127.0.0.1:3000] [--report data/reports/report.html]
                                    [--only report|lineage]

Run it after command 1 (`bash scripts/run.sh`), so report.png shows today's report.

- docs/img/report.png: the first screen of report.html as a reader sees it
  (a 1280 x 900 window: the answer box); the picture carries the digest of the
  report's code (stragglers/reports/page/code_digest.py), and a test fails when
  that code has changed since (retake it: `--only report`);
- docs/img/lineage.png: the asset lineage in the Dagster UI (start
  `dagster dev` first). The UI's first-visit dialog is dismissed through the
  Chrome DevTools protocol, which is why this is not a plain `--screenshot`.

Needs the `chromium` command (Debian package chromium) and `websockets`
(installed with dagster-webserver).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PORT = 9333
#: the window a reader opens the report in (the first screen the README shows)
REPORT_WINDOW = (1280, 900)


async def _capture(url: str, out: Path, width: int, height: int, js: str = "", wait_s: float = 6.0) -> None:
    import websockets

    with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/json") as r:
        page = next(t for t in json.load(r) if t["type"] == "page")
    async with websockets.connect(page["webSocketDebuggerUrl"], max_size=2**28) as ws:
        n = 0

        async def call(method: str, **params):
            nonlocal n
            n += 1
            await ws.send(json.dumps({"id": n, "method": method, "params": params}))
            while True:
                msg = json.loads(await ws.recv())
                if msg.get("id") == n:
                    return msg.get("result", {})

        await call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                   mobile=False)
        await call("Page.navigate", url=url)
        await asyncio.sleep(wait_s)
        if js:
            await call("Runtime.evaluate", expression=js)
            await asyncio.sleep(2)
        shot = await call("Page.captureScreenshot", format="png")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(shot["data"]))
        print(f"wrote {out}")


def stamp(png: Path) -> None:
    """Write the digest of today's report code into the picture (stragglers/reports/page/code_digest.py)."""
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo

    from stragglers.reports.page.code_digest import KEY, report_code_digest

    info = PngInfo()
    info.add_text(KEY, report_code_digest())
    with Image.open(png) as im:
        im.load()
        im.save(png, pnginfo=info)


SKIP_DIALOG = "[...document.querySelectorAll('button')].filter(b => b.textContent.trim() === 'Skip')" \
              ".forEach(b => b.click())"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ui", default="http://127.0.0.1:3000")
    data = Path(os.environ.get("NURD_DATA_DIR") or ROOT / "data")
    ap.add_argument("--report", default=str(data / "reports" / "report.html"))
    ap.add_argument("--out", default=str(ROOT / "docs" / "img"))
    ap.add_argument("--only", choices=("report", "lineage"), help="take one screenshot (lineage needs the UI)")
    args = ap.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        raise SystemExit("chromium not found (Debian: apt-get install chromium)")
    out = Path(args.out)
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.Popen([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                 f"--remote-debugging-port={PORT}", f"--user-data-dir={profile}", "about:blank"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(50):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{PORT}/json/version", timeout=1)
                    break
                except OSError:
                    time.sleep(0.2)
            if args.only in (None, "report"):
                if not Path(args.report).is_file():
                    raise SystemExit(f"{args.report} not found: run command 1 first (bash scripts/run.sh)")
                asyncio.run(_capture(Path(args.report).resolve().as_uri(), out / "report.png", *REPORT_WINDOW,
                                     wait_s=3))
                stamp(out / "report.png")
            if args.only in (None, "lineage"):
                lineage = f"{args.ui}/assets/comparison_tables?view=lineage&lineageScope=upstream&lineageDepth=10"
                asyncio.run(_capture(lineage, out / "lineage.png", 1500, 800, js=SKIP_DIALOG, wait_s=10))
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
