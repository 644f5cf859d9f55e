"""Shared fixtures: tiny demo checkpoints (built once per session), demo settings, the shared real data."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def demo_weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder holding every tiny demo checkpoint, written through `masc-ui demo-weights`' code path."""
    from masc_ui.models.demo import write_demo_weights

    root = tmp_path_factory.mktemp("demo-weights")
    write_demo_weights(root)
    return root


@pytest.fixture()
def demo_settings(demo_weights: Path, tmp_path: Path):
    from masc_ui.settings import Settings

    return Settings(profile="demo", demo_weights_dir=demo_weights, device="cpu", dtype="float32",
                    data_dir=tmp_path / "data")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test data not found at {SHARED_DATA} (../shared/data next to the project)")
    return SHARED_DATA


_REQUIRED = {
    # marker: (env var that makes it required, text of the skip that means "the service is missing")
    "postgres": ("MASC_REQUIRE_POSTGRES", "MASC_TEST_POSTGRES_URL is not set"),
    "e2e": ("MASC_REQUIRE_E2E", "Chromium not found"),
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In CI (.ci/run sets MASC_REQUIRE_POSTGRES / MASC_REQUIRE_E2E) the server and browser tests must run:
    a missing server or browser is a failure there, not a silent skip. Other skips (e.g. no shared data) stay skips."""
    required = {m for m, (env, _) in _REQUIRED.items() if os.environ.get(env)}
    for item in items:
        for marker in required & {m.name for m in item.iter_markers()}:
            item.user_properties.append(("required", marker))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped:
        return
    for marker in (v for k, v in item.user_properties if k == "required"):
        if _REQUIRED[marker][1] in str(report.longrepr):
            report.outcome = "failed"
            report.longrepr = (f"{item.nodeid}: {marker} tests are required here (MASC_REQUIRE_{marker.upper()} is "
                               f"set) but were skipped: {report.longrepr}")
            return
