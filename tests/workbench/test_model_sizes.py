"""Model sizes beside the metric choices and model loads with progress, once per process (issue 13)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from masc_ui.metrics.registry import get_spec, list_metrics
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.settings import Settings
from masc_ui.workbench import build_workbench
from masc_ui.workbench.model_sizes import (
    CHECKPOINT_FIELDS,
    PUBLISHED_PARAMETERS,
    checkpoint_size,
    human_bytes,
    metric_size_text,
)

NOT_CHECKPOINTS = {
    "pickscore_processor",
    "naflex_max_patches",
    "fg_threshold",
    "stripper",
    "judge_model",
    "judge_base_url",
    "judge_temperature",
    "judge_seed",
    "dbpp_judge",
    "dbpp_api_model",
}


def _folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def test_every_backbone_setting_is_a_checkpoint_or_a_parameter():
    for spec in list_metrics(None):
        for setting in spec.backbone_settings:
            assert setting in CHECKPOINT_FIELDS or setting in NOT_CHECKPOINTS, (spec.name, setting)


def test_demo_sizes_are_the_demo_checkpoints_bytes_labelled(demo_settings, demo_weights):
    vqa = metric_size_text(get_spec("vqascore"), demo_settings)
    assert vqa == f"demo checkpoint {human_bytes(_folder_bytes(demo_weights / 'clip-flant5'))}"
    # FaceSim: the recognizer only (the demo profile's detector, MTCNN, ships inside its PyPI package).
    facesim = metric_size_text(get_spec("facesim"), demo_settings)
    assert facesim == f"demo checkpoint {human_bytes(_folder_bytes(demo_weights / 'face-recognizer'))}"


def test_paper_sizes_on_disk_or_published(tmp_path: Path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    settings = Settings(profile="paper", cache_dir=tmp_path / "ckpt")
    assert metric_size_text(get_spec("vqascore"), settings) == "11B parameters, not downloaded yet"
    assert metric_size_text(get_spec("facescore"), settings) == "size shown once downloaded"
    # A repo in the Hugging Face cache: its snapshot files, each blob counted once.
    snap = tmp_path / "hub" / "models--zhiqiulin--clip-flant5-xxl" / "snapshots" / "abc"
    blobs = tmp_path / "hub" / "models--zhiqiulin--clip-flant5-xxl" / "blobs"
    snap.mkdir(parents=True)
    blobs.mkdir()
    (blobs / "b1").write_bytes(b"x" * 3000)
    (snap / "model.safetensors").symlink_to(blobs / "b1")
    (snap / "alias.safetensors").symlink_to(blobs / "b1")
    assert metric_size_text(get_spec("vqascore"), settings) == "3.0 kB on disk"
    # A URL's file already downloaded into the cache folder; a local file set by the user.
    url = (
        "https://github.com/jchen175/ArtScore/raw/main/ckpt/"
        "loss@listMLE_model@resnet50_denseLayer@True_batch_size@16_lr@0.0001_dropout@0.5_E_8.pth"
    )
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / url.rsplit("/", 1)[-1]).write_bytes(b"y" * 1_500_000)
    assert metric_size_text(get_spec("artscore"), settings) == "1.5 MB on disk"
    mine = tmp_path / "itm"
    mine.mkdir()
    (mine / "model.safetensors").write_bytes(b"z" * 2500)
    assert metric_size_text(get_spec("itmscore"), settings.replace(itm_model=str(mine))) == "2.5 kB on disk"
    assert (
        checkpoint_size("Salesforce/blip2-itm-vit-g", settings).parameters
        == PUBLISHED_PARAMETERS["Salesforce/blip2-itm-vit-g"]
    )


def test_models_load_once_with_a_progress_message_and_a_second_run_loads_nothing(demo_settings):
    models = ModelRegistry()
    wb = build_workbench(demo_settings, models=models)
    loads: list[object] = []
    messages: list[str] = []
    names = ["vqascore", "itmscore", "facesim", "facescore", "artscore"]
    first = wb.scoring.make_sample(
        [Image.new("RGB", (64, 48), "red")], Image.new("RGB", (64, 48), "blue"), "a red ball", None
    )
    with models.reporting(loads.append):
        wb.scoring.score(first, names, user=None, progress=lambda f, what: messages.append(what))
    assert loads and len(loads) == len(models.loaded())
    vqa_line = next(m for m in messages if m.startswith("loading vqascore"))
    assert vqa_line == (
        f"loading vqascore: clip-flant5 ({metric_size_text(get_spec('vqascore'), wb.settings)}): "
        "first use only, it stays loaded"
    )
    # A second Run (another sample, so the result cache does not answer) loads nothing and says nothing of loading.
    loaded, loads[:], messages[:] = models.loaded(), [], []
    second = wb.scoring.make_sample(
        [Image.new("RGB", (64, 48), "green")], Image.new("RGB", (64, 48), "white"), "a cube", None
    )
    with models.reporting(loads.append):
        report = wb.scoring.score(second, names, user=None, progress=lambda f, what: messages.append(what))
    assert not report.cached and loads == [] and models.loaded() == loaded
    assert not [m for m in messages if m.startswith("loading")]
    wb.close()


def test_reporting_is_per_context_and_only_for_real_loads():
    import threading

    models = ModelRegistry()
    seen: list[object] = []
    with models.reporting(seen.append):
        models.get("a", lambda: 1)
        models.get("a", lambda: 2)
        worker = threading.Thread(target=lambda: models.get("b", lambda: 3))
        worker.start()
        worker.join()
    models.get("c", lambda: 4)
    assert seen == ["a"]  # not "b" (another thread's load), not "c" (outside the block)
    assert models.loaded() == ["a", "b", "c"]
