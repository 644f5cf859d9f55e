"""Many writers at once: 8 threads x 250 ratings and 4 processes x 250 ratings, on SQLite and PostgreSQL.
Every acknowledged rating must be present, with no duplicates, and no lock error may reach a caller."""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter

import pytest
import sqlalchemy as sa

from storage import CRITERIA, Store
from storage import schema as t
from storage.engine import create_engine

RATINGS_PER_WRITER = 250
needs_fork = pytest.mark.skipif(sys.platform == "win32", reason="needs fork()")


def _samples(store: Store, n: int) -> list[int]:
    img = store.images.add(b"\x89PNG\r\n\x1a\nconcurrency")
    return [
        store.samples.add("load", references=[img], output=img, prompt=f"prompt {i}", subject="x").id for i in range(n)
    ]


def _write(store: Store, rater: str, sample_ids: list[int]) -> list[tuple[int, str, int, str, int]]:
    """Rate every (sample, criterion) once; return what each committed call acknowledged."""
    acks = []
    for i in range(RATINGS_PER_WRITER):
        sample, criterion = sample_ids[i // 2], CRITERIA[i % 2]
        r = store.ratings.rate(rater, sample, criterion, (i * 7) % 5, seconds_spent=float(i))
        acks.append((r.id, r.rater, r.sample_id, r.criterion, r.score))
    return acks


def _check(store: Store, acks: list[tuple[int, str, int, str, int]], writers: int) -> None:
    assert len(acks) == writers * RATINGS_PER_WRITER
    assert len({a[0] for a in acks}) == len(acks)  # every acknowledged rating has its own row

    def rows(s):
        return [
            (r.id, u, r.sample_id, r.criterion, r.score)
            for r, u in s.execute(sa.select(t.Rating, t.Rater.username).join(t.Rater, t.Rater.id == t.Rating.rater_id))
        ]

    stored = store.tx.read(rows)
    assert Counter(stored) == Counter(acks)  # all present, nothing extra, no duplicates
    assert store.integrity_check() == "ok"


def test_threads(store):
    sample_ids = _samples(store, RATINGS_PER_WRITER // 2)
    raters = [store.ratings.ensure_rater(f"thread-{i}").username for i in range(8)]
    acks: list = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(raters))

    def work(rater: str) -> None:
        try:
            barrier.wait()
            acks.extend(_write(store, rater, sample_ids))
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(r,)) for r in raters]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == [], f"{len(errors)} writers failed, first: {errors[0]!r}"
    _check(store, acks, len(raters))


def test_threads_editing_the_same_rating(store):
    """Racing edits of one (rater, sample, criterion): one current rating, a gap-free history."""
    sample_id = _samples(store, 1)[0]
    store.ratings.ensure_rater("shared")
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(40):
                store.ratings.rate("shared", sample_id, "cp", (worker + i) % 5)
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    current = store.ratings.current(rater="shared")
    assert len(current) == 1
    history = store.ratings.history(current[0].id)
    assert [h.revision for h in history] == list(range(1, current[0].revision + 1))
    assert all(a.score != b.score for a, b in zip(history, history[1:]))


@needs_fork
def test_processes(store):
    sample_ids = _samples(store, RATINGS_PER_WRITER // 2)
    raters = [store.ratings.ensure_rater(f"process-{i}").username for i in range(4)]
    url = store.engine.url.render_as_string(hide_password=False)
    store.engine.dispose()  # no pooled connection crosses fork()
    children = []
    for rater in raters:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            code = 0
            try:
                child = Store(create_engine(url), store.data_dir)
                for ack in _write(child, rater, sample_ids):
                    os.write(write_fd, (" ".join(map(str, ack)) + "\n").encode())
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                os.write(write_fd, f"error {exc!r}\n".encode())
                code = 1
            os._exit(code)
        os.close(write_fd)
        children.append((pid, read_fd))
    acks = []
    for pid, fd in children:
        out = b""
        while chunk := os.read(fd, 65536):
            out += chunk
        os.close(fd)
        assert os.waitpid(pid, 0)[1] == 0, out.decode()[-500:]
        for line in out.decode().splitlines():
            rid, rater, sample, criterion, score = line.split()
            acks.append((int(rid), rater, int(sample), criterion, int(score)))
    _check(store, acks, len(raters))
