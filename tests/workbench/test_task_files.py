"""The folder of files handed to raters' browsers (`blind_files.TaskFiles`): each written once, atomically, served
from there as they are, pruned least recently handed out first and never while a browser may still fetch them."""

from __future__ import annotations

from pathlib import Path

import pytest

from masc_ui.workbench.blind_files import TaskFiles

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def _reader(calls: list[str], name: str):
    def read() -> bytes:
        calls.append(name)
        return PNG + name.encode()

    return read


def test_each_file_is_written_once_with_its_suffix(tmp_path: Path):
    images, calls = TaskFiles(tmp_path), []
    first = images.file("a" * 64, _reader(calls, "a"), suffix=".png")
    again = images.file("a" * 64, _reader(calls, "a"), suffix=".png")
    assert first == again == tmp_path / f"{'a' * 64}.png" and calls == ["a"]
    assert first.read_bytes() == PNG + b"a"
    first.unlink()  # deleted behind its back: written again
    assert images.file("a" * 64, _reader(calls, "a"), suffix=".png").exists() and calls == ["a", "a"]


def test_prune_deletes_the_least_recently_handed_out_half(tmp_path: Path):
    images, calls = TaskFiles(tmp_path), []
    images.MAX_FILES, images.MIN_AGE_S = 4, -1.0  # every file is old enough to go
    paths = {name: images.file(name, _reader(calls, name), suffix=".png") for name in "abcd"}
    images.file("a", _reader(calls, "a"), suffix=".png")  # handed out again: now the most recent
    paths["e"] = images.file("e", _reader(calls, "e"), suffix=".png")  # 5 > 4: the two least recently handed out go
    assert {n for n, p in paths.items() if p.exists()} == {"a", "d", "e"}  # b and c went, a stayed
    images.file("b", _reader(calls, "b"), suffix=".png")  # asked for again: written again
    assert calls.count("b") == 2 and calls.count("a") == 1


def test_files_handed_out_recently_are_never_pruned(tmp_path: Path):
    images, calls = TaskFiles(tmp_path), []
    images.MAX_FILES = 2  # MIN_AGE_S as shipped: a browser may still be fetching any of them
    paths = [images.file(name, _reader(calls, name), suffix=".png") for name in "abcde"]
    assert all(p.exists() for p in paths)


def test_a_failed_write_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from masc_ui.workbench import blind_files

    images = TaskFiles(tmp_path)

    def broken(src, dst) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(blind_files.os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        images.file("d" * 64, lambda: PNG, suffix=".png")
    assert list(tmp_path.iterdir()) == []  # the half-made temporary file went too
    monkeypatch.undo()
    assert images.file("d" * 64, lambda: PNG, suffix=".png").read_bytes() == PNG  # made when asked again
