"""A launched app (demo profile, temporary DB, free port, an admin and a rater login) and a headless Debian
Chromium."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

CHROMIUM = os.environ.get("MASC_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
USERS = {"alice": "pw-alice", "bob": "pw-bob", "carol": "pw-carol"}
ROLES = {"alice": "admin", "bob": "rater", "carol": "rater"}
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "e2e"
WIDE, SMALL = {"width": 1400, "height": 1000}, {"width": 800, "height": 900}
"""The two window sizes every tab is checked at."""


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium"),
            args=CHROMIUM_ARGS,
            headless=True,
        )
        yield b
        b.close()


@pytest.fixture(scope="module")
def app_server(demo_weights: Path, tmp_path_factory: pytest.TempPathFactory):
    from masc_ui.settings import Settings
    from masc_ui.ui.launch import free_port, serve
    from masc_ui.workbench import build_workbench

    data = tmp_path_factory.mktemp("e2e-data")
    settings = Settings(
        profile="demo",
        demo_weights_dir=demo_weights,
        device="cpu",
        dtype="float32",
        data_dir=data,
        users=",".join(f"{u}:{p}:{ROLES[u]}" for u, p in USERS.items()),
        port=free_port(),
    )
    wb = build_workbench(settings)
    app = serve(wb, block=False)
    url = app.local_url.rstrip("/")
    yield SimpleNamespace(url=url, wb=wb)
    app.close()
    wb.close()


@pytest.fixture()
def shots(request: pytest.FixtureRequest):
    """shot(page, name): full-page screenshot test-artifacts/e2e/<test>-<n>-<name>.png."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    counter = iter(range(1, 100))

    def shot(page, name: str, *, full_page: bool = True) -> Path:
        path = ARTIFACTS / f"{request.node.name}-{next(counter):02d}-{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path

    return shot


def login(browser, url: str, user: str, viewport: dict | None = None):
    """A new page logged in as `user`, with the app loaded."""
    page = browser.new_page(viewport=viewport or WIDE)
    page.set_default_timeout(180_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.get_by_label("username").fill(user)
    page.get_by_label("password").fill(USERS[user])
    page.get_by_role("button", name="Login").click()
    page.locator("#tabs").wait_for(timeout=180_000)  # every role's page has the tabs (the status line is admins')
    page.errors = errors  # type: ignore[attr-defined]
    return page
