"""The folder of files handed to raters' browsers (`ratings.TaskImages`): written once per content, served from
there as they are, pruned least recently handed out first and never while a browser may still fetch them."""
from __future__ import annotations

from pathlib import Path

import pytest

from masc_ui.workbench.ratings import TaskImages

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def _reader(calls: list[str], name: str):
    def read() -> bytes:
        calls.append(name)
        return PNG + name.encode()
    return read


def test_each_content_is_written_once_with_the_suffix_of_its_type(tmp_path: Path):
    images, calls = TaskImages(tmp_path), []
    first = images.file("a" * 64, _reader(calls, "a"))
    again = images.file("a" * 64, _reader(calls, "a"))
    assert first == again == tmp_path / f"{'a' * 64}.png" and calls == ["a"]
    assert first.read_bytes() == PNG + b"a"
    first.unlink()  # deleted behind its back: written again
    assert images.file("a" * 64, _reader(calls, "a")).exists() and calls == ["a", "a"]


def test_prune_deletes_the_least_recently_handed_out_half(tmp_path: Path):
    images, calls = TaskImages(tmp_path), []
    images.MAX_FILES, images.MIN_AGE_S = 4, -1.0  # every file is old enough to go
    paths = {name: images.file(name, _reader(calls, name)) for name in "abcd"}
    images.file("a", _reader(calls, "a"))  # handed out again: now the most recent
    paths["e"] = images.file("e", _reader(calls, "e"))  # 5 > 4: the two least recently handed out go
    assert {n for n, p in paths.items() if p.exists()} == {"a", "d", "e"}  # b and c went, a stayed
    images.file("b", _reader(calls, "b"))  # asked for again: written again
    assert calls.count("b") == 2 and calls.count("a") == 1


def test_files_handed_out_recently_are_never_pruned(tmp_path: Path):
    images, calls = TaskImages(tmp_path), []
    images.MAX_FILES = 2  # MIN_AGE_S as shipped: a browser may still be fetching any of them
    paths = [images.file(name, _reader(calls, name)) for name in "abcde"]
    assert all(p.exists() for p in paths)


def test_a_linked_file_is_named_by_its_type_and_made_once(tmp_path: Path):
    images, calls = TaskImages(tmp_path), []

    def link(dest: Path) -> None:
        calls.append(dest)
        dest.write_bytes(b"\xff\xd8\xff\xe0 a jpeg")
    first = images.file("c" * 64, link=link)
    assert first == tmp_path / f"{'c' * 64}.jpg" and first.read_bytes() == b"\xff\xd8\xff\xe0 a jpeg"
    assert images.file("c" * 64, link=link) == first and len(calls) == 1
    assert calls[0].parent == tmp_path and calls[0].name.startswith(".tmp-")  # made under a temporary name
    assert sorted(p.name for p in tmp_path.iterdir()) == [first.name]


def test_a_failed_link_leaves_no_file(tmp_path: Path):
    images = TaskImages(tmp_path)

    def broken(dest: Path) -> None:
        dest.write_bytes(b"half")
        raise OSError("disk full")
    with pytest.raises(OSError, match="disk full"):
        images.file("d" * 64, link=broken)
    assert list(tmp_path.iterdir()) == []
