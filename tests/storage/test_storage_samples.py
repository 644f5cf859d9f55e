"""Datasets, subjects, images and samples: idempotent adds, duplicate keys, bad input, listing."""

from __future__ import annotations

import pytest

from storage import Conflict, DuplicateKey, InvalidInput, NotFound
from storage.blobs import sha256_hex


def test_images_are_stored_once_by_hash(png, store):
    data = png(1)
    first = store.images.add(data)
    assert first == sha256_hex(data) == store.images.add(data)
    assert store.images.read(first, verify=True) == data
    assert store.images.media_type(first) == "image/png"
    assert len(list(store.blobs.root.rglob("*"))) == 2  # one shard folder + one file


def test_unknown_image_and_bad_hash(png, store):
    with pytest.raises(NotFound, match="store.images.add"):
        store.images.read("0" * 64)
    with pytest.raises(InvalidInput, match="64 lowercase hex"):
        store.images.read("xyz")
    with pytest.raises(InvalidInput, match="empty"):
        store.images.add(b"")


def test_add_sample_records_every_field(png, store):
    refs = [store.images.add(png(i)) for i in (1, 2)]
    out = store.images.add(png(3))
    sample = store.samples.add(
        "dreambench",
        references=refs,
        output=out,
        prompt="a sks dog on the moon",
        subject="dog",
        category="live",
        method="dreambooth",
        seed=2**40,
        external_key="dog-3",
        info={"path": "a/b.png"},
    )
    assert sample.references == tuple(refs) and sample.output == out
    assert (sample.dataset, sample.subject, sample.category) == ("dreambench", "dog", "live")
    assert (sample.method, sample.seed, sample.external_key, sample.info) == (
        "dreambooth",
        2**40,
        "dog-3",
        {"path": "a/b.png"},
    )
    assert sample.created_at.tzinfo is not None
    assert store.samples.get(sample.id) == sample
    assert store.samples.get_by_key("dreambench", "dog-3") == sample
    assert store.samples.get_by_key("dreambench", "nope") is None


def test_add_is_idempotent_by_key_and_by_content(png, store, add_sample):
    a = add_sample(external_key="k1")
    again = store.samples.add(
        "ds", references=list(a.references), output=a.output, prompt=a.prompt, subject="dog", external_key="k1"
    )
    assert again.id == a.id
    b = add_sample()
    same = store.samples.add("ds", references=list(b.references), output=b.output, prompt=b.prompt, subject="dog")
    assert same.id == b.id
    # the same content under another dataset is another sample
    other = store.samples.add("other", references=list(b.references), output=b.output, prompt=b.prompt, subject="dog")
    assert other.id != b.id
    assert store.samples.count() == 3


def test_duplicate_key_with_different_content_is_refused(png, store, add_sample):
    a = add_sample(external_key="k1")
    with pytest.raises(DuplicateKey, match="'k1'.*another key"):
        store.samples.add(
            "ds",
            references=list(a.references),
            output=a.output,
            prompt="another prompt",
            subject="dog",
            external_key="k1",
        )
    assert store.samples.count() == 1
    assert store.samples.get(a.id).prompt == a.prompt


def test_sample_with_unknown_image_writes_nothing(png, store):
    out = store.images.add(png(1))
    with pytest.raises(NotFound, match="not in the blob store"):
        store.samples.add("fresh", references=["a" * 64], output=out, prompt="p", subject="cat")
    assert store.samples.datasets() == []  # the dataset was not half-created


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"references": []}, "non-empty list"),
        ({"references": "abc"}, "non-empty list"),
        ({"prompt": "  "}, "prompt must not be empty"),
        ({"prompt": 3}, "prompt must be a string"),
        ({"subject": ""}, "subject must not be empty"),
        ({"seed": 1.5}, "seed must be an integer"),
        ({"seed": True}, "seed must be an integer"),
        ({"seed": 2**70}, "64 bits"),
        ({"info": [1]}, "info must be a dict"),
        ({"info": {"x": object()}}, "JSON-serialisable"),
        ({"output": "nothex"}, "output must be a SHA-256"),
    ],
)
def test_bad_sample_input(png, store, kwargs, message):
    img = store.images.add(png(1))
    fields = dict(references=[img], output=img, prompt="p", subject="s")
    fields.update(kwargs)
    with pytest.raises(InvalidInput, match=message):
        store.samples.add("ds", **fields)
    assert store.samples.count() == 0


def test_subject_category_conflict(png, store, add_sample):
    add_sample(subject="cat", category="live")
    assert store.samples.ensure_subject("ds", "cat").category == "live"
    with pytest.raises(Conflict, match="category 'live'"):
        store.samples.ensure_subject("ds", "cat", "object")
    later = store.samples.ensure_subject("ds", "mug")
    assert later.category is None
    assert store.samples.ensure_subject("ds", "mug", "object").category == "object"
    assert [s.name for s in store.samples.subjects("ds")] == ["cat", "mug"]


def test_list_filter_and_page(png, store, add_sample):
    for i in range(6):
        add_sample(dataset="a" if i < 4 else "b", method=f"m{i % 2}", subject=f"s{i % 3}")
    assert [d.name for d in store.samples.datasets()] == ["a", "b"]
    assert store.samples.count() == 6 and store.samples.count("a") == 4
    assert {s.method for s in store.samples.list("a", method="m1")} == {"m1"}
    assert len(store.samples.list("a", method="m1")) == 2
    assert [s.subject for s in store.samples.list(subject="s0")] == ["s0", "s0"]
    ids = [s.id for s in store.samples.list()]
    assert ids == sorted(ids)
    assert [s.id for s in store.samples.list(limit=2, offset=2)] == ids[2:4]
    assert store.samples.methods("a") == ["m0", "m1"]
    with pytest.raises(NotFound, match="ensure_dataset"):
        store.samples.subjects("nope")
    with pytest.raises(NotFound, match="sample #999"):
        store.samples.get(999)
