"""Content-addressed blob store: dedupe, concurrent writers, killed writers leave no partial file."""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time

import pytest

from storage.blobs import TEMP_PREFIX, BlobStore, sha256_hex, sniff_media_type
from storage.errors import BlobCorrupt, BlobMissing, InvalidInput

needs_fork = pytest.mark.skipif(sys.platform == "win32", reason="needs fork() and SIGKILL")


def _files(store: BlobStore) -> list[str]:
    return sorted(p.name for p in store.root.rglob("*") if p.is_file())


def test_put_get_dedupe(tmp_path):
    store = BlobStore(tmp_path)
    digest = store.put(b"hello")
    assert digest == sha256_hex(b"hello") and store.put(bytearray(b"hello")) == digest
    assert store.get(digest, verify=True) == b"hello"
    assert store.path(digest) == tmp_path / digest[:2] / digest
    assert _files(store) == [digest]
    assert oct(store.path(digest).stat().st_mode & 0o777) == "0o644"


def test_missing_corrupt_and_bad_input(tmp_path):
    store = BlobStore(tmp_path)
    with pytest.raises(BlobMissing, match="missing from the blob store"):
        store.get("a" * 64)
    digest = store.put(b"data")
    store.path(digest).write_bytes(b"tampered")
    with pytest.raises(BlobCorrupt, match="does not hash to its name"):
        store.get(digest, verify=True)
    assert store.put(b"data") == digest and store.get(digest, verify=True) == b"data"  # healed by re-adding
    with pytest.raises(InvalidInput, match="must be bytes"):
        store.put("text")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="SHA-256"):
        store.path("../../etc/passwd")


def test_media_type_sniffing():
    assert sniff_media_type(b"\x89PNG\r\n\x1a\nrest") == "image/png"
    assert sniff_media_type(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert sniff_media_type(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert sniff_media_type(b"plain") == "application/octet-stream"


def test_concurrent_threads_same_and_different_bytes(tmp_path):
    store = BlobStore(tmp_path)
    shared = os.urandom(200_000)
    distinct = [os.urandom(50_000) for _ in range(16)]
    results: list[str] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(16)

    def work(i: int) -> None:
        try:
            barrier.wait()
            for _ in range(5):
                results.append(store.put(shared))
            results.append(store.put(distinct[i]))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    expected = {sha256_hex(shared)} | {sha256_hex(d) for d in distinct}
    assert set(results) == expected and set(_files(store)) == expected  # no temp files left behind
    for digest in expected:
        store.get(digest, verify=True)


@needs_fork
def test_concurrent_processes_same_bytes(tmp_path):
    store = BlobStore(tmp_path)
    data = os.urandom(1_000_000)
    pids = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                for _ in range(20):
                    BlobStore(tmp_path).put(data)
            except BaseException:  # noqa: BLE001 - the exit code says it failed
                code = 1
            os._exit(code)
        pids.append(pid)
    assert [os.waitpid(pid, 0)[1] for pid in pids] == [0, 0, 0, 0]
    assert _files(store) == [sha256_hex(data)] and store.get(sha256_hex(data), verify=True) == data


@needs_fork
def test_killed_writer_leaves_no_partial_file(tmp_path):
    store = BlobStore(tmp_path)
    rng = random.Random(5)
    outcomes = {"complete": 0, "absent": 0}
    for attempt in range(12):
        data = os.urandom(8_000_000) + bytes([attempt])
        digest = sha256_hex(data)
        pid = os.fork()
        if pid == 0:
            BlobStore(tmp_path).put(data)
            os._exit(0)
        time.sleep(rng.uniform(0, 0.05))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        final = store.path(digest)
        if final.exists():
            assert store.get(digest, verify=True) == data  # whole file or nothing
            outcomes["complete"] += 1
        else:
            outcomes["absent"] += 1
        for tmp in final.parent.glob(f"{TEMP_PREFIX}*") if final.parent.exists() else []:
            assert not tmp.name.startswith(digest)  # leftovers never carry a blob's name
    assert outcomes["absent"] > 0  # some kills really landed mid-write
    store.remove_stale_temp_files(older_than_s=0)
    assert all(not name.startswith(TEMP_PREFIX) for name in _files(store))
    for name in _files(store):
        store.get(name, verify=True)


def test_link_puts_the_stored_file_at_a_new_name_without_copying(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    digest = store.put(b"\x89PNG\r\n\x1a\n stored bytes")
    served = tmp_path / "served"
    served.mkdir()
    store.link(digest, served / "a.png")
    assert (served / "a.png").read_bytes() == store.get(digest)
    assert os.path.samefile(served / "a.png", store.path(digest))  # a hard link: one file, no copy
    (served / "a.png").unlink()  # removing the link leaves the blob as it was
    assert store.get(digest, verify=True) == b"\x89PNG\r\n\x1a\n stored bytes"
    with pytest.raises(FileExistsError):  # a new name only: an existing file is never replaced or written through
        store.link(digest, store.path(digest))
    with pytest.raises(BlobMissing, match="missing from the blob store"):
        store.link("b" * 64, served / "b.png")
    with pytest.raises(FileNotFoundError):  # the destination's folder is missing: not a missing blob
        store.link(digest, served / "no-such-folder" / "c.png")


def test_link_copies_where_the_file_system_has_no_hard_links(tmp_path, monkeypatch):
    store = BlobStore(tmp_path / "blobs")
    digest = store.put(b"bytes on another file system")

    def cross_device(src, dst):
        raise OSError(18, "Invalid cross-device link")  # EXDEV: the destination is on another file system

    monkeypatch.setattr(os, "link", cross_device)
    store.link(digest, tmp_path / "copy.bin")
    assert (tmp_path / "copy.bin").read_bytes() == b"bytes on another file system"
    assert not os.path.samefile(tmp_path / "copy.bin", store.path(digest))
