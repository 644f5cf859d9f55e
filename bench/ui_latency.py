"""Browser latency of the Score tab's flow on one pair: Run (every score on screen), then Explain (the four maps'
notes on screen), then Save (the saved message on screen), then Run again (from the result cache), printed side
by side.

    python bench/ui_latency.py [--profile demo] [--pairs cat-on-grass coffee-on-bricks] [--device cpu]

Starts the app in-process (temporary database, free port, no logins), drives Debian's Chromium headless with
Playwright, and for each pair: loads it (with its masks), clicks Run and waits until all metric rows are in the
score table, clicks Explain and waits for its notes, clicks Save and waits for the saved message, then clicks
Run again. The first pair's first Run includes loading every model. Runs against whichever `masc_ui` is
importable: `PYTHONPATH=/path/to/other/checkout python bench/ui_latency.py` measures another version of the
app the same way (numbers from one busy machine are only comparable within one run of the two).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
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
        arg=[expected_rows, before],
        timeout=TIMEOUT_MS,
    )
    return time.perf_counter() - start, page.locator(message).inner_text()


MESSAGE = "#score-message [data-testid=markdown]"
NOTES = "#explain-notes [data-testid=markdown]"


def _click_and_wait(page, button: str, selector: str, starts: tuple[str, ...]) -> tuple[float, str]:
    """Click `button`; seconds until the text of `selector` changed and starts with one of `starts`."""
    before = page.locator(selector).inner_text() if page.locator(selector).count() else ""
    start = time.perf_counter()
    page.locator(button).click()
    page.wait_for_function(
        "([sel, before, starts]) => { const m = document.querySelector(sel); if (!m) return false;"
        " const t = m.innerText; return t !== before && starts.some(s => t.startsWith(s)); }",
        arg=[selector, before, list(starts)],
        timeout=TIMEOUT_MS,
    )
    return time.perf_counter() - start, page.locator(selector).inner_text()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="demo", choices=("demo", "fast", "paper"))
    ap.add_argument("--device", default="auto")
    ap.add_argument("--pairs", nargs="+", default=["cat-on-grass", "coffee-on-bricks"])
    ap.add_argument("--chromium", default=os.environ.get("MASC_CHROMIUM", "/usr/bin/chromium"))
    args = ap.parse_args(argv)

    from playwright.sync_api import sync_playwright

    import masc_ui
    from masc_ui.metrics.registry import list_metrics
    from masc_ui.settings import Settings
    from masc_ui.ui.launch import free_port, serve

    try:
        from masc_ui.workbench import build_workbench
    except ImportError:  # a checkout from before the one composition root
        from masc_ui.workbench import Workbench

        build_workbench = Workbench.open

    try:
        from masc_ui.workbench.examples import list_examples
    except ImportError:  # a checkout from before masc_ui/workbench/
        from masc_ui.workbench_examples import list_examples

    titles = dict((name, title) for title, name in list_examples())
    tmp = Path(tempfile.mkdtemp(prefix="masc-ui-latency-"))
    settings = Settings(
        profile=args.profile,
        device=args.device,
        data_dir=tmp / "data",
        demo_weights_dir=tmp / "demo-weights",
        port=free_port(),
    )
    wb = build_workbench(settings)
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
                    arg=titles[name],
                    timeout=TIMEOUT_MS,
                )
                first, _ = run_once(page, n_metrics)
                explain, notes = _click_and_wait(page, "#explain", NOTES, ("CP ", "⚠", "reference", "PF"))
                save, saved = _click_and_wait(page, "#save", MESSAGE, ("saved as sample", "⚠"))
                second, msg2 = run_once(page, n_metrics)
                results.append((name, first, explain, save, second, "cached" in msg2, notes, saved))
            browser.close()
    finally:
        app.close()
        (wb.close if hasattr(wb, "close") else wb.records.close)()

    status = wb.status()
    print(f"code {Path(masc_ui.__file__).resolve().parent.parent}")
    print(f"profile {status.profile.name} · device {status.device} · dtype {status.dtype} · {n_metrics} metrics")
    print(f"{'pair':<18} {'Run (s)':>8} {'Explain (s)':>12} {'Save (s)':>9} {'Run again (s)':>14}  again cached")
    for name, first, explain, save, second, cached, _notes, _saved in results:
        print(f"{name:<18} {first:>8.3f} {explain:>12.3f} {save:>9.3f} {second:>14.3f}  {cached}")
    for name, *_, notes, saved in results:
        print(f"  {name}: explain -> {notes[:60]!r}; save -> {saved[:70]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
