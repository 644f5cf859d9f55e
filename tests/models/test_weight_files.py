"""Weight files named in the settings: local file or folder, a URL downloaded once into the cache folder, a
Hugging Face repo (offline here: a clear error naming the setting); strict key checks."""

from __future__ import annotations

import pytest
import torch

from masc_ui.errors import ModelUnavailableError
from masc_ui.models.state_dicts import check_keys, read_state_dict
from masc_ui.models.weight_files import resolve_weights_file


def test_local_file_folder_and_url(tmp_path):
    weights = tmp_path / "src" / "w.pth"
    weights.parent.mkdir()
    torch.save({"a": torch.ones(2)}, weights)
    common = dict(filename="w.pth", what="test weights", setting="artscore_checkpoint", cache_dir=tmp_path / "cache")
    assert resolve_weights_file(str(weights), **common) == weights
    assert resolve_weights_file(str(weights.parent), **common) == weights
    downloaded = resolve_weights_file(weights.as_uri(), **common)
    assert downloaded == tmp_path / "cache" / "w.pth" and torch.equal(
        read_state_dict(downloaded, what="t")["a"], torch.ones(2)
    )
    weights.unlink()
    assert resolve_weights_file(weights.as_uri(), **common) == downloaded  # downloaded once, then reused


def test_unavailable_weights_name_the_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    common = dict(filename="w.pth", what="test weights", setting="face_recognizer", cache_dir=tmp_path)
    with pytest.raises(ModelUnavailableError, match="MASC_FACE_RECOGNIZER"):
        resolve_weights_file(str(tmp_path / "missing.pth"), **common)
    with pytest.raises(ModelUnavailableError, match="has no w.pth"):
        resolve_weights_file(str(tmp_path), **common)
    with pytest.raises(ModelUnavailableError, match="could not download"):
        resolve_weights_file((tmp_path / "gone.pth").as_uri(), **common)
    with pytest.raises(ModelUnavailableError, match="Hugging Face repo 'someone/not-cached'.*MASC_FACE_RECOGNIZER"):
        resolve_weights_file("someone/not-cached", **common)


def test_read_and_check_state_dicts(tmp_path):
    path = tmp_path / "x.pt"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(ModelUnavailableError, match="not a readable torch state dict"):
        read_state_dict(path, what="x")
    torch.save({"state_dict": {"w": torch.zeros(1)}, "epoch": 3}, path)
    assert list(read_state_dict(path, what="x", wrapper_key="state_dict")) == ["w"]
    with pytest.raises(ModelUnavailableError, match="plain state dict"):
        read_state_dict(path, what="x")
    expected = {"w": (1,), "bn.num_batches_tracked": ()}
    check_keys(expected, {"w": torch.zeros(1)}, what="x")
    with pytest.raises(ModelUnavailableError, match="unexpected key 'v'"):
        check_keys(expected, {"w": torch.zeros(1), "v": torch.zeros(1)}, what="x")
    with pytest.raises(ModelUnavailableError, match=r"'w' has shape \(2,\)"):
        check_keys(expected, {"w": torch.zeros(2)}, what="x")


def test_release_folders_from_a_folder_a_zip_or_its_url(tmp_path):
    import zipfile

    from masc_ui.models.weight_files import resolve_weights_folder

    release = tmp_path / "release"
    (release / "lora").mkdir(parents=True)
    (release / "w.pth").write_bytes(b"w")
    common = dict(marker="lora", what="test release", setting="dreamsim_weights", cache_dir=tmp_path / "cache")
    assert resolve_weights_folder(str(release), **common) == release
    assert resolve_weights_folder(str(tmp_path), **common) == release  # the one folder inside holding the marker
    archive = tmp_path / "pack.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.write(release / "w.pth", "w.pth")
        zipped.writestr("lora/adapter_config.json", "{}")
    extracted = resolve_weights_folder(str(archive), **common)
    assert extracted == tmp_path / "cache" / "pack" and (extracted / "w.pth").read_bytes() == b"w"
    from_url = resolve_weights_folder(archive.as_uri(), **{**common, "cache_dir": tmp_path / "cache2"})
    assert from_url == tmp_path / "cache2" / "pack" and (tmp_path / "cache2" / "pack.zip").is_file()
    archive.unlink()
    assert resolve_weights_folder(archive.as_uri(), **{**common, "cache_dir": tmp_path / "cache2"}) == from_url
    with pytest.raises(ModelUnavailableError, match="MASC_DREAMSIM_WEIGHTS"):
        resolve_weights_folder(str(tmp_path / "missing"), **common)
    with pytest.raises(ModelUnavailableError, match="holds no lora"):
        resolve_weights_folder(str(release / "lora"), **common)
    (tmp_path / "bad.zip").write_bytes(b"nope")
    with pytest.raises(ModelUnavailableError, match="not a readable zip archive"):
        resolve_weights_folder(str(tmp_path / "bad.zip"), **common)
    assert not (tmp_path / "cache" / "bad").exists() and not (tmp_path / "cache" / ".bad.tmp").exists()
