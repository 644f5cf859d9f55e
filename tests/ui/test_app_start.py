"""`python app.py` starts offline on a fresh data dir: demo weights written on first start, banner, HTTP 200."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from masc_ui.ui.launch import free_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("command", [["app.py"], ["-m", "masc_ui.cli", "serve"]], ids=["app.py", "masc-ui serve"])
def test_app_starts_offline_on_demo_weights(tmp_path: Path, command: list[str]):
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "MASC_PROFILE": "auto",
           "MASC_DATA_DIR": str(tmp_path / "data"), "MASC_PORT": str(port), "MASC_DEVICE": "cpu"}
    log = tmp_path / "app.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, *command], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(1)
        assert proc.poll() is None, log.read_text()[-3000:]
        text = log.read_text()
        assert "profile: demo (asked: auto)" in text
        assert (tmp_path / "data" / "demo-weights" / "siglip2-naflex").is_dir()
        config = httpx.get(f"http://127.0.0.1:{port}/config", timeout=10).text
        assert "demo weights: numbers are not meaningful" in config
    finally:
        proc.terminate()
        proc.wait(timeout=30)
