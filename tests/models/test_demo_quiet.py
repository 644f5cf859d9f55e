"""Every demo checkpoint is written and loaded without console noise: no progress bars, no transformers warnings
(the token-id warnings transformers raises about its own default SigLIP text config are filtered, and only those),
special-token ids within each checkpoint's vocabulary."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from masc_ui.models.demo import DEMO_BUILDERS, write_demo_weights
from masc_ui.models.loading import load_pretrained


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name}: {record.getMessage()}")


@contextlib.contextmanager
def captured() -> Iterator[tuple[_Records, io.StringIO, list]]:
    """transformers log records >= WARNING, everything written to stderr/stdout, Python warnings."""
    handler = _Records()
    root = logging.getLogger("transformers")
    root.addHandler(handler)
    once = getattr(logging.Logger, "warning_once", None)
    if hasattr(once, "cache_clear"):
        once.cache_clear()  # a warning already shown earlier in the session would otherwise be hidden here
    text = io.StringIO()
    try:
        with (
            contextlib.redirect_stderr(text),
            contextlib.redirect_stdout(text),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            yield handler, text, caught
    finally:
        root.removeHandler(handler)


def _model_class(folder: Path):
    import transformers

    config = json.loads((folder / "config.json").read_text())
    if config.get("model_type") == "clip_t5":
        from masc_ui.models.nets.clip_flant5 import ClipFlanT5

        return ClipFlanT5
    return getattr(transformers, config["architectures"][0])


def _config_class(folder: Path):
    from transformers import AutoConfig

    if json.loads((folder / "config.json").read_text()).get("model_type") == "clip_t5":
        from masc_ui.metrics.vqa.vqascore import CheckpointConfig

        return CheckpointConfig
    return AutoConfig


@pytest.mark.parametrize("name", list(DEMO_BUILDERS))
def test_demo_checkpoint_writes_and_loads_quietly(name: str, tmp_path: Path):
    with captured() as (records, text, caught):
        folder = write_demo_weights(tmp_path, [name])[name]
    assert records.messages == [] and text.getvalue() == "", (records.messages, text.getvalue())
    assert [str(w.message) for w in caught if "unclosed file" not in str(w.message)] == []
    if not (folder / "config.json").exists():
        return  # a state dict in its released layout (SAM, faces, ArtScore...): no transformers config to load
    with captured() as (records, text, caught):
        config = load_pretrained(_config_class(folder), str(folder), what=name)
        # DINO is loaded without ViT's pooling layer, as `masc_ui.metrics.dino.dino_i` does (DINO ships none)
        extra = {"add_pooling_layer": False} if getattr(config, "model_type", None) == "vit" else {}
        load_pretrained(_model_class(folder), str(folder), what=name, **extra)
    assert records.messages == [], records.messages
    assert "Writing model shards" not in text.getvalue()
    assert not [
        w
        for w in caught
        if issubclass(w.category, (UserWarning, FutureWarning, DeprecationWarning))
        and "unclosed file" not in str(w.message)
    ], [str(w.message) for w in caught]
    if not isinstance(config, dict):
        _assert_token_ids_in_vocabulary(config)


def _assert_token_ids_in_vocabulary(config) -> None:
    """Every `*_token_id` of every text config is None or within that config's vocabulary."""
    configs = [config] + [
        getattr(config, k)
        for k in dir(config)
        if k.endswith("_config") and hasattr(getattr(config, k, None), "to_dict")
    ]
    for c in configs:
        vocab = getattr(c, "vocab_size", None)
        if vocab is None:
            continue
        for key, value in c.to_dict().items():
            if key.endswith("_token_id") and isinstance(value, int):
                assert 0 <= value < vocab, f"{type(c).__name__}.{key} = {value} outside vocabulary of {vocab}"


def test_filter_keeps_warnings_about_the_checkpoint_itself(tmp_path: Path):
    """A config whose OWN bos id lies outside its vocabulary still warns (only transformers' default-config diff
    is silenced)."""
    from transformers import AutoConfig, CLIPTextConfig

    CLIPTextConfig(vocab_size=10, bos_token_id=0, eos_token_id=1, pad_token_id=1).save_pretrained(tmp_path)
    raw = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**raw, "bos_token_id": 99}))
    with captured() as (records, _, _):
        load_pretrained(AutoConfig, str(tmp_path), what="bad ids")
    assert any("bos_token_id" in m and "99" in m for m in records.messages), records.messages
