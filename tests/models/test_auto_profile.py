"""The `auto` profile: paper when every metric backbone's config loads, else demo with a reason naming the
model (tests run with HF_HUB_OFFLINE=1, so the Hub ids are unreachable unless cached)."""
from __future__ import annotations

from masc_ui.models.auto_profile import CHECKED, effective_model_ids, resolve_auto_profile
from masc_ui.models.registry import ModelRegistry
from masc_ui.settings import Settings


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
    settings = Settings(profile="auto", data_dir=tmp_path, siglip_model=str(demo_weights / "siglip2-naflex"),
                        clip_model=str(demo_weights / "clip"), pickscore_model=str(demo_weights / "clip-h"),
                        pickscore_processor=str(demo_weights / "clip-h"), dino_model=str(demo_weights / "dino"))
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
