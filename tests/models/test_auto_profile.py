"""The `auto` profile: paper when every metric backbone's config loads, else demo with a reason naming the
model (tests run with HF_HUB_OFFLINE=1, so the Hub ids are unreachable unless cached)."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from huggingface_hub import constants as hub_constants

from masc_ui.models import auto_profile, hub_probe
from masc_ui.models.auto_profile import CHECKED, effective_model_ids, resolve_auto_profile
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.models.profiles import PAPER
from masc_ui.settings import Settings
from masc_ui.ui.launch import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_explicit_profiles_are_kept(tmp_path):
    assert resolve_auto_profile(Settings(profile="demo", data_dir=tmp_path))[0] == "demo"
    assert resolve_auto_profile(Settings(profile="paper", data_dir=tmp_path))[0] == "paper"


def test_auto_falls_back_to_demo_naming_the_model(tmp_path):
    missing = tmp_path / "no-such-siglip"
    settings = Settings(profile="auto", data_dir=tmp_path, siglip_model=str(missing))
    profile, reason = resolve_auto_profile(settings)
    assert profile == "demo"
    assert str(missing) in reason and "siglip" in reason and "numbers mean nothing" in reason
    assert effective_model_ids(settings).clip == str(settings.resolved_demo_weights_dir / "clip")


def test_auto_is_paper_when_every_backbone_loads(demo_weights, tmp_path):
    settings = Settings(
        profile="auto",
        data_dir=tmp_path,
        siglip_model=str(demo_weights / "siglip2-naflex"),
        clip_model=str(demo_weights / "clip"),
        pickscore_model=str(demo_weights / "clip-h"),
        pickscore_processor=str(demo_weights / "clip-h"),
        dino_model=str(demo_weights / "dino"),
    )
    models = ModelRegistry()
    assert resolve_auto_profile(settings, models)[0] == "paper"
    assert effective_model_ids(settings, models).dino == str(demo_weights / "dino")
    assert [k[0] for k in models.loaded()] == ["auto-profile"]  # probed once, remembered by the registry
    assert set(CHECKED) == {"siglip", "clip", "pickscore", "pickscore_processor", "dino"}


def test_demo_profile_writes_missing_checkpoints_on_first_use(tmp_path):
    import numpy as np
    from PIL import Image

    from masc_ui.metrics.registry import get_scorer
    from masc_ui.metrics.sample import Sample

    settings = Settings(profile="demo", data_dir=tmp_path, demo_weights_dir=tmp_path / "w", device="cpu")
    img = Image.fromarray(np.zeros((32, 32, 3), np.uint8))
    [value] = get_scorer("clip_t", settings).score([Sample(refs=(), out=img, prompt="a cat")])
    assert not value.is_nan
    assert sorted(p.name for p in (tmp_path / "w").iterdir()) == ["clip"]


# --- deciding offline: cache first, one short probe, no retries ------------------------------------------------


class _Calls:
    """Records the probe's HEAD requests (url, timeout) and every config load (model id, kwargs)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.heads: list[tuple[str, float]] = []
        self.loads: list[tuple[str, dict]] = []
        real_head, real_load = hub_probe._head, auto_profile.load_pretrained

        def head(url: str, timeout_s: float) -> None:
            self.heads.append((url, timeout_s))
            real_head(url, timeout_s)

        def load(auto_cls, model_id, **kwargs):
            self.loads.append((model_id, {k: v for k, v in kwargs.items() if k != "what"}))
            return real_load(auto_cls, model_id, **kwargs)

        monkeypatch.setattr(hub_probe, "_head", head)
        monkeypatch.setattr(auto_profile, "load_pretrained", load)

    @property
    def probing_s(self) -> float:
        """The most time the probes may take: the sum of their timeouts (the probe thread is joined that long)."""
        return sum(timeout for _, timeout in self.heads)


@contextlib.contextmanager
def _console() -> contextlib.AbstractContextManager[io.StringIO]:
    """Everything printed or logged (huggingface_hub's retry lines are log records) inside the block."""
    text = io.StringIO()
    handler = logging.StreamHandler(text)
    loggers = [logging.getLogger(name) for name in ("", "huggingface_hub", "transformers")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
            yield text
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


def test_no_network_decides_with_one_short_probe_and_no_retries(tmp_path, monkeypatch):
    """Not offline by setting, nothing cached, the Hub endpoint refuses connections (a closed loopback port): ONE
    probe of at most 2 s, no config is asked from the Hub, nothing printed, demo with the reason."""
    closed = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hub_constants, "ENDPOINT", closed)
    monkeypatch.setattr(auto_profile, "cached_config", lambda model_id: None)
    calls = _Calls(monkeypatch)
    with _console() as printed:
        profile, reason = resolve_auto_profile(Settings(profile="auto", data_dir=tmp_path))
    assert profile == "demo"
    assert [url for url, _ in calls.heads] == [closed] and calls.probing_s <= 2.0
    assert calls.loads == []  # no config is fetched: no huggingface_hub download, so no retry with backoff
    assert "unreachable" in reason and PAPER.siglip in reason and "not in the local Hugging Face cache" in reason
    assert "Traceback" not in printed.getvalue() and "Retrying" not in printed.getvalue(), printed.getvalue()
    assert printed.getvalue() == ""


def test_a_probe_that_hangs_is_abandoned_after_its_timeout(tmp_path, monkeypatch):
    """A DNS lookup that never answers cannot hold start-up: the probe thread is joined for its timeout only."""
    release = threading.Event()
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(auto_profile, "cached_config", lambda model_id: None)
    monkeypatch.setattr(auto_profile, "PROBE_TIMEOUT_S", 0.2)
    monkeypatch.setattr(hub_probe, "_head", lambda url, timeout_s: release.wait(30))
    try:
        profile, reason = resolve_auto_profile(Settings(profile="auto", data_dir=tmp_path))
    finally:
        release.set()
    assert profile == "demo" and "no answer from" in reason and "within 0.2 s" in reason


def test_hf_hub_offline_decides_without_any_probe(tmp_path, monkeypatch):
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(auto_profile, "cached_config", lambda model_id: None)
    calls = _Calls(monkeypatch)
    profile, reason = resolve_auto_profile(Settings(profile="auto", data_dir=tmp_path))
    assert profile == "demo" and calls.heads == [] and calls.loads == []
    assert "HF_HUB_OFFLINE is set" in reason and "could not be loaded" in reason


def test_reachable_hub_is_asked_for_the_missing_configs(tmp_path, monkeypatch):
    """The probe answers: the configs not on this machine are loaded from the Hub (here: fail, so demo with the
    loader's own reason), after exactly one probe."""
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(auto_profile, "cached_config", lambda model_id: None)
    heads: list[float] = []
    loads: list[str] = []
    monkeypatch.setattr(hub_probe, "_head", lambda url, timeout_s: heads.append(timeout_s))

    def no_such_model(auto_cls, model_id, **kwargs):
        loads.append(model_id)
        raise auto_profile.ModelUnavailableError(f"{model_id}: 404")

    monkeypatch.setattr(auto_profile, "load_pretrained", no_such_model)
    profile, reason = resolve_auto_profile(Settings(profile="auto", data_dir=tmp_path))
    assert profile == "demo" and len(heads) == 1
    assert loads == [PAPER.siglip] and "404" in reason


def _fake_hub_cache(hub_cache: Path, demo_weights: Path) -> None:
    """The paper backbones' config.json in huggingface_hub's cache layout (models--org--name/refs/main + snapshots),
    taken from the demo checkpoints of the same architectures."""
    sources = {
        "siglip": "siglip2-naflex",
        "clip": "clip",
        "pickscore": "clip-h",
        "pickscore_processor": "clip-h",
        "dino": "dino",
    }
    for name, folder in sources.items():
        repo = hub_cache / f"models--{getattr(PAPER, name).replace('/', '--')}"
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / "main").write_text("0" * 40)
        snapshot = repo / "snapshots" / ("0" * 40)
        snapshot.mkdir(parents=True, exist_ok=True)
        shutil.copy(demo_weights / folder / "config.json", snapshot / "config.json")


@pytest.mark.parametrize("cached", [True, False], ids=["cached", "empty-cache"])
def test_local_hugging_face_cache_is_looked_at_first(demo_weights, tmp_path, cached):
    """In a fresh process (huggingface_hub reads HF_HOME at import): with the paper configs in the cache, `auto`
    is `paper` without a probe even though the endpoint is unreachable; with an empty cache, `demo`."""
    home = tmp_path / "hf-home"
    if cached:
        _fake_hub_cache(home / "hub", demo_weights)
    env = {
        **os.environ,
        "HF_HOME": str(home),
        "HF_HUB_OFFLINE": "0",
        "TRANSFORMERS_OFFLINE": "0",
        "HF_ENDPOINT": f"http://127.0.0.1:{free_port()}",
        "PYTHONPATH": str(ROOT),
    }
    code = (
        "import json; from masc_ui.models import hub_probe; from masc_ui.models.auto_profile import "
        "resolve_auto_profile; from masc_ui.settings import Settings; heads = []; real = hub_probe._head; "
        "hub_probe._head = lambda u, t: (heads.append(t), real(u, t)); "
        f"p, r = resolve_auto_profile(Settings(profile='auto', data_dir={str(tmp_path)!r})); "
        "print(json.dumps([p, r, heads]))"
    )
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    profile, reason, heads = json.loads(run.stdout.strip().splitlines()[-1])
    if cached:
        assert (profile, heads) == ("paper", []) and "Hugging Face cache" in reason
    else:
        assert profile == "demo" and len(heads) == 1 and sum(heads) <= 2.0 and "unreachable" in reason
    assert "Retrying" not in run.stderr and "Traceback" not in run.stderr, run.stderr
