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
@pytest.mark.parametrize("command", [["app.py"], ["-m", "masc_ui", "serve"]], ids=["app.py", "masc-ui serve"])
def test_app_starts_offline_on_demo_weights(tmp_path: Path, command: list[str]):
    port = free_port()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "MASC_PROFILE": "auto",
        "MASC_DATA_DIR": str(tmp_path / "data"),
        "MASC_PORT": str(port),
        "MASC_DEVICE": "cpu",
    }
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


@pytest.mark.slow
def test_start_without_network_is_quiet(tmp_path: Path):
    """No network and nothing cached, without HF_HUB_OFFLINE (the Hub endpoint is a closed loopback port): the app
    starts on demo weights and prints only the profile line (which profile and why) and Gradio's URL lines: no
    retry, no traceback, no transformers warning, no progress bar."""
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "SPACE_ID", "PYTHONWARNINGS")
    }
    env |= {
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_ENDPOINT": f"http://127.0.0.1:{free_port()}",
        "MASC_PROFILE": "auto",
        "MASC_DATA_DIR": str(tmp_path / "data"),
        "MASC_PORT": str(port),
        "MASC_DEVICE": "cpu",
    }
    log = tmp_path / "app.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None and "Running on" not in log.read_text():
            time.sleep(0.5)
        lines = [ln for ln in log.read_text().splitlines() if ln.strip()]
        assert proc.poll() is None, "\n".join(lines[-40:])
        assert lines[0].startswith("profile: demo (asked: auto): using the demo profile"), lines
        assert "unreachable" in lines[0] and "not in the local Hugging Face cache" in lines[0]
        assert [ln for ln in lines[1:] if not ln.startswith("* ")] == [], lines
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_waiting_for_the_page_names_the_address_that_never_answered():
    from masc_ui.ui.launch import wait_until_answering

    url = f"http://127.0.0.1:{free_port()}/"  # nobody listens there
    with pytest.raises(RuntimeError, match=rf"{url} did not answer within 0.5 s \(last try: ConnectError\).*NO_PROXY"):
        wait_until_answering(url, within_s=0.5)
