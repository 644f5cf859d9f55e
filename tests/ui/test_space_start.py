"""End to end on a simulated Hugging Face Space: `python app.py` with `SPACE_ID` set and a stand-in for `/data`
(`MASC_SPACE_STORAGE_DIR`). Writable: the database lands there without any setting and no banner shows. Missing or
unusable (a file, a read-only folder): the app starts anyway, says so in its log and shows the permanent storage
banner."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from masc_ui.ui.launch import free_port
from masc_ui.workbench.status import SPACE_STORAGE_BANNER

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from space_dirs import read_only_dir  # noqa: E402


def _start(tmp_path: Path, storage: Path, demo_weights: Path) -> tuple[subprocess.Popen, str, Path]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MASC_")}
    env |= {
        "SPACE_ID": "someone/masc-workbench",
        "MASC_SPACE_STORAGE_DIR": str(storage),
        "MASC_HOST": "127.0.0.1",
        "MASC_PORT": str(port),
        "MASC_PROFILE": "demo",
        "MASC_DEVICE": "cpu",
        "MASC_DEMO_WEIGHTS_DIR": str(demo_weights),
        "HOME": str(tmp_path / "home"),
    }
    log = tmp_path / "app.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and "Running on" not in log.read_text():
        time.sleep(0.5)
    assert proc.poll() is None, log.read_text()[-3000:]
    return proc, f"http://127.0.0.1:{port}", log


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=30)


@pytest.mark.slow
def test_space_with_persistent_storage_keeps_its_data_there(tmp_path, demo_weights):
    from gradio_client import Client

    storage = tmp_path / "data"
    storage.mkdir()
    proc, url, log = _start(tmp_path, storage, demo_weights)
    try:
        assert SPACE_STORAGE_BANNER not in httpx.get(f"{url}/config", timeout=30).text
        *_, message, _ = Client(url, verbose=False).predict("", "", "", "id", False, api_name="/browse")
        assert message == "0 of 0 sample(s)"  # the handler opened the database...
        assert (storage / "masc" / "masc.sqlite3").is_file()  # ...on the persistent storage, without a setting
        assert not (tmp_path / "home" / ".cache" / "masc-ui" / "data").exists()
        assert "warning:" not in log.read_text()
    finally:
        _stop(proc)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["missing", "a file", "read-only"])
def test_space_without_persistent_storage_shows_the_banner(tmp_path, demo_weights, kind):
    storage = tmp_path / "data"
    if kind == "a file":
        storage.write_text("a file where the volume should be")
    elif kind == "read-only":
        storage = read_only_dir(tmp_path)
    proc, url, log = _start(tmp_path, storage, demo_weights)
    try:
        config = httpx.get(f"{url}/config", timeout=30).text
        assert SPACE_STORAGE_BANNER in config and 'id=\\"storage-banner\\"' in config
        assert f"warning: {SPACE_STORAGE_BANNER}" in log.read_text()
    finally:
        _stop(proc)
