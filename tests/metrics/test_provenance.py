"""Provenance: the revision of a checkpoint (transformers 5 no longer keeps `config._commit_hash`)."""

from __future__ import annotations

import torch

from masc_ui.metrics.provenance import checkpoint_revision, make_provenance

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def test_revision_from_the_hub_cache(tmp_path):
    repo = tmp_path / "models--org--tiny-clip"
    (repo / "snapshots" / COMMIT).mkdir(parents=True)
    (repo / "snapshots" / COMMIT / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    assert checkpoint_revision("org/tiny-clip", cache_dir=str(tmp_path)) == COMMIT
    assert checkpoint_revision("org/not-cached", cache_dir=str(tmp_path)) == "unknown"


def test_local_folders_and_legacy_configs(tmp_path):
    assert checkpoint_revision(str(tmp_path)) == "local"

    class Legacy:
        _commit_hash = COMMIT

    assert checkpoint_revision("org/x", Legacy()) == COMMIT


def test_make_provenance_is_json_able():
    prov = make_provenance(
        model_id="m", revision="local", params={"fill": (1, 2, 3)}, device="cpu", dtype=torch.bfloat16, processor_id="p"
    )
    assert prov["params"] == {"fill": [1, 2, 3], "processor_id": "p"} and prov["dtype"] == "bfloat16"
    assert "processor_id" not in prov
    assert prov["code_version"]
