"""Save docs/images/serve.png: the page of ``chainrule serve`` after a slider move, an
expression and a training run on moons. Needs playwright and the system chromium.

    python scripts/screenshot_serve.py [OUTPUT.png]
"""

from __future__ import annotations

import shutil
import sys
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

from chainrule.apps.web.server import make_server

DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "docs" / "images" / "serve.png"


def main(output: Path = DEFAULT_OUTPUT) -> None:
    browser_path = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser_path is None:
        sys.exit("screenshot_serve: needs the chromium browser (apt-get install chromium)")
    server = make_server(port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=browser_path)
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(server.url)
            page.wait_for_selector("#grad-w1[data-value]")
            page.fill("#slider-w1", "0.8")
            page.fill("#expr", "tanh(a*b) ** 2 + log(a)")
            page.click("#expr-go")
            page.wait_for_selector("#expr-grads td[data-name='b']")
            page.click("#train")
            page.wait_for_selector("#train-status[data-state='done']", timeout=60_000)
            output.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=output, full_page=True)
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    print(f"screenshot_serve: wrote {output}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUTPUT)
