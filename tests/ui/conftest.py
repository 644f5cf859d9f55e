"""The launched app for handler tests: demo profile, temporary database, free port, two admin logins (alice,
bob: they score, save, browse and rate) and one rater (carol)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

USERS = {"alice": "pw-alice", "bob": "pw-bob", "carol": "pw-carol"}
ROLES = {"alice": "admin", "bob": "admin", "carol": "rater"}


@pytest.fixture(scope="module")
def served(demo_weights: Path, tmp_path_factory: pytest.TempPathFactory):
    from masc_ui.settings import Settings
    from masc_ui.ui.launch import free_port, serve
    from masc_ui.workbench import build_workbench

    data = tmp_path_factory.mktemp("app-data")
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
    yield SimpleNamespace(url=url, wb=wb, settings=settings, data_dir=data, app=app)
    app.close()
    wb.close()


@pytest.fixture()
def client(served):
    from gradio_client import Client

    return Client(served.url, auth=("alice", USERS["alice"]), verbose=False)
