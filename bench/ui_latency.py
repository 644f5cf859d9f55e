"""Browser latency of the Score tab: time from clicking Run to every score on screen, first and second run on
the same example pair (the second reuses the caches), printed side by side.

    python bench/ui_latency.py [--profile demo] [--pairs cat-on-grass coffee-on-bricks] [--device cpu]

Starts the app in-process (temporary database, free port, no logins), drives Debian's Chromium headless with
Playwright, and for each pair: loads it (with its masks), clicks Run, waits until all metric rows are in the
score table, then clicks Run again. The first pair's first run includes loading every model.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
TIMEOUT_MS = 600_000


def run_once(page, expected_rows: int) -> tuple[float, str]:
    """Click Run; seconds until the score table holds `expected_rows` rows and the message changed."""
    message = "#score-message [data-testid=markdown]"
    before = page.locator(message).inner_text()
    start = time.perf_counter()
    page.locator("#run").click()
    page.wait_for_function(
        "([n, before]) => { const m = document.querySelector('#score-message [data-testid=markdown]');"
        " return document.querySelectorAll('#score-table tr[data-metric]').length === n && m.innerText !== before"
        " && m.innerText.startsWith('scored') && !document.querySelector('#score-message .pending'); }",
        arg=[expected_rows, before], timeout=TIMEOUT_MS)
    return time.perf_counter() - start, page.locator(message).inner_text()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="demo", choices=("demo", "fast", "paper"))
    ap.add_argument("--device", default="auto")
    ap.add_argument("--pairs", nargs="+", default=["cat-on-grass", "coffee-on-bricks"])
    ap.add_argument("--chromium", default=os.environ.get("MASC_CHROMIUM", "/usr/bin/chromium"))
    args = ap.parse_args(argv)

    from playwright.sync_api import sync_playwright

    from masc_ui.metrics.registry import list_metrics
    from masc_ui.settings import Settings
    from masc_ui.ui.launch import free_port, serve
    from masc_ui.workbench import Workbench
    from masc_ui.workbench_examples import list_examples

    titles = dict((name, title) for title, name in list_examples())
    tmp = Path(tempfile.mkdtemp(prefix="masc-ui-latency-"))
    settings = Settings(profile=args.profile, device=args.device, data_dir=tmp / "data",
                        demo_weights_dir=tmp / "demo-weights", port=free_port())
    wb = Workbench.open(settings)
    app = serve(wb, block=False)
    url = app.local_url
    n_metrics = len(list_metrics())
    results = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            page.locator("#example-load").wait_for(timeout=TIMEOUT_MS)
            for name in args.pairs:
                page.locator("#example-pick input").click()
                page.get_by_role("option", name=titles[name]).click()
                page.locator("#example-load").click()
                page.wait_for_function(
                    "t => document.querySelector('#score-message [data-testid=markdown]')?.innerText.includes(t)",
                    arg=titles[name], timeout=TIMEOUT_MS)
                first, msg1 = run_once(page, n_metrics)
                second, msg2 = run_once(page, n_metrics)
                results.append((name, first, second, "cached" in msg2))
            browser.close()
    finally:
        app.close()
        wb.records.close()

    status = wb.status()
    print(f"profile {status.profile.name} · device {status.device} · dtype {status.dtype} · {n_metrics} metrics")
    print(f"{'pair':<20} {'first run (s)':>14} {'second run (s)':>15} {'first/second':>13}  second from cache")
    for name, first, second, cached in results:
        print(f"{name:<20} {first:>14.3f} {second:>15.3f} {first / second:>13.1f}  {cached}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
