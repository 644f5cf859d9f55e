"""Checkpoint resolution and download: size + SHA-256 check, temp file renamed only when it matches."""

from __future__ import annotations

import hashlib
import io
import re
import urllib.error

import pytest

from masc_ui.errors import ModelUnavailableError
from masc_ui.segmentation.sam_checkpoints import (
    OFFICIAL_CHECKPOINTS,
    CheckpointSource,
    download_checkpoint,
    resolve_checkpoint,
    sha256_file,
)


def _served(tmp_path, payload: bytes, name: str = "sam_test_abc123.pth") -> CheckpointSource:
    src = tmp_path / "server" / name
    src.parent.mkdir()
    src.write_bytes(payload)
    return CheckpointSource(src.as_uri(), hashlib.sha256(payload).hexdigest(), len(payload))


def test_official_table_names_the_published_files():
    assert set(OFFICIAL_CHECKPOINTS) == {"vit_b", "vit_l", "vit_h"}
    for variant, source in OFFICIAL_CHECKPOINTS.items():
        assert source.url == f"https://dl.fbaipublicfiles.com/segment_anything/{source.filename}"
        assert source.filename.startswith(f"sam_{variant}_")
        assert re.fullmatch(r"[0-9a-f]{64}", source.sha256)
        assert source.size > 300_000_000


def test_download_from_file_url_checks_and_renames(tmp_path):
    payload = bytes(range(256)) * 5000  # > one 1 MiB chunk
    source = _served(tmp_path, payload)
    cache = tmp_path / "cache"
    path = download_checkpoint(source, cache, progress=False)
    assert path == cache / "sam_test_abc123.pth"
    assert path.read_bytes() == payload
    assert sha256_file(path) == source.sha256
    assert [p.name for p in cache.iterdir()] == [path.name]  # no temporary file left behind


def test_corrupted_download_leaves_nothing(tmp_path):
    source = _served(tmp_path, b"x" * 1000)
    wrong = CheckpointSource(source.url, "0" * 64, source.size)
    cache = tmp_path / "cache"
    with pytest.raises(ModelUnavailableError, match="corrupted"):
        download_checkpoint(wrong, cache, progress=False)
    assert list(cache.iterdir()) == []
    truncated = CheckpointSource(source.url, source.sha256, source.size + 1)
    with pytest.raises(ModelUnavailableError, match="1,000 bytes"):
        download_checkpoint(truncated, cache, progress=False)
    assert list(cache.iterdir()) == []


def test_present_file_is_reused_without_downloading(tmp_path):
    payload = b"weights" * 10
    source = _served(tmp_path, payload)
    calls = []

    def opener(url):
        calls.append(url)
        return io.BytesIO(payload)

    first = download_checkpoint(source, tmp_path / "cache", progress=False, opener=opener)
    second = download_checkpoint(source, tmp_path / "cache", progress=False, opener=opener)
    assert first == second and calls == [source.url]


def test_network_failure_is_a_model_unavailable_error(tmp_path):
    def offline(url):
        raise urllib.error.URLError("no route to host")

    source = CheckpointSource("https://example.invalid/sam_vit_b_01ec64.pth", "0" * 64, 10)
    with pytest.raises(ModelUnavailableError, match="could not download.*--sam-checkpoint"):
        download_checkpoint(source, tmp_path / "cache", progress=False, opener=offline)
    assert list((tmp_path / "cache").iterdir()) == []


def test_resolve_prefers_a_local_checkpoint(tiny_sam_checkpoint, tmp_path):
    assert resolve_checkpoint("vit_tiny", tiny_sam_checkpoint, tmp_path) == tiny_sam_checkpoint
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        resolve_checkpoint("vit_b", tmp_path / "missing.pth", tmp_path)
    with pytest.raises(ModelUnavailableError, match="no official download.*demo-weights"):
        resolve_checkpoint("vit_tiny", None, tmp_path)


def test_resolve_uses_the_cached_official_file(tmp_path, monkeypatch):
    payload = b"official bytes"
    source = _served(tmp_path, payload, "sam_vit_b_01ec64.pth")
    monkeypatch.setitem(OFFICIAL_CHECKPOINTS, "vit_b", source)
    path = resolve_checkpoint("vit_b", None, tmp_path / "cache", progress=False)
    assert path.read_bytes() == payload
