"""`EditorBlobs`, the image editors' blob store: what it keeps, counts, refuses and drops (no app needed)."""

from __future__ import annotations

import pytest

from masc_ui.ui.editor_blobs import MAX_BLOB_ID, BlobRefused, EditorBlobs, blob_index


def _refused(blobs: EditorBlobs, *args) -> BlobRefused:
    with pytest.raises(BlobRefused) as caught:
        blobs.put(*args)
    return caught.value


def test_bytes_are_counted_per_session_and_a_replaced_blob_is_not_counted_twice():
    blobs = EditorBlobs(max_session_bytes=100)
    blobs.put("s1", "e1", "background", None, b"x" * 40)
    blobs.put("s1", "e1", "background", None, b"x" * 60)  # the same slot again: replaces
    blobs.put("s1", "e1", "layer", 2, b"x" * 30)
    assert blobs.held_bytes("s1") == 90 and blobs["e1"].layers == [None, None, b"x" * 30]
    refused = _refused(blobs, "s1", "e2", "composite", None, b"x" * 11)
    assert refused.status == 413 and "hold 90 bytes" in str(refused) and "at most 100 bytes" in str(refused)
    assert blobs.held_bytes("s1") == 90
    blobs.put("s2", "f1", "composite", None, b"x" * 100)  # another session: a budget of its own
    assert blobs.held_bytes() == 190


def test_an_edit_read_by_an_event_is_released():
    blobs = EditorBlobs(max_session_bytes=100)
    blobs.put("s1", "e1", "background", None, b"x" * 40)
    blobs.put("s1", "e2", "composite", None, b"y" * 10)
    edit = blobs.pop("e1")
    assert edit.background == b"x" * 40 and "e1" not in blobs and blobs.held_bytes("s1") == 10
    assert blobs.pop("e1") is None and blobs.pop("never-sent", "none") == "none"
    blobs.put("s1", "e3", "background", None, b"z" * 90)  # the freed bytes are free again


def test_only_the_most_recent_sessions_keep_their_blobs():
    blobs = EditorBlobs(max_session_bytes=100, max_sessions=2)
    for session in ("s1", "s2"):
        blobs.put(session, f"{session}-e", "background", None, b"x")
    blobs.put("s1", "s1-f", "background", None, b"x")  # s1 sent last: s2 is the least recent
    blobs.put("s3", "s3-e", "background", None, b"x")
    assert (blobs.held_bytes("s1"), blobs.held_bytes("s2"), blobs.held_bytes("s3")) == (2, 0, 1)
    assert set(blobs) == {"s1-e", "s1-f", "s3-e"}


def test_a_session_that_ends_drops_its_blobs_only():
    blobs = EditorBlobs(max_session_bytes=100)
    blobs.put("s1", "e1", "background", None, b"x")
    blobs.put("s2", "e2", "background", None, b"x")
    blobs.end_session("s1")
    blobs.end_session("never-seen")
    blobs.end_session(None)
    assert set(blobs) == {"e2"} and blobs.held_bytes() == 1


@pytest.mark.parametrize(
    "args, status, said",
    [
        (("", "e1", "background", None, b"x"), 422, "needs the page session"),
        (("s1", "", "background", None, b"x"), 422, f"an id of 1 to {MAX_BLOB_ID} characters"),
        (("s1", "e" * (MAX_BLOB_ID + 1), "background", None, b"x"), 422, f"an id of 1 to {MAX_BLOB_ID} characters"),
        (("s1", "e1", "thumbnail", None, b"x"), 422, "unknown editor blob type 'thumbnail'"),
        (("s1", "e1", "layer", None, b"x"), 422, "layer index None is out of range"),
        (("s1", "e1", "layer", 10**8, b"x"), 422, "layer index 100000000 is out of range"),
        (("s1", "e1", "layer", -1, b"x"), 422, "layer index -1 is out of range"),
    ],
)
def test_blobs_that_are_not_kept_say_why(args, status, said):
    blobs = EditorBlobs(max_session_bytes=100)
    refused = _refused(blobs, *args)
    assert refused.status == status and said in str(refused) and len(blobs) == 0


def test_an_id_belongs_to_the_session_that_sent_it_first():
    blobs = EditorBlobs(max_session_bytes=100)
    blobs.put("s1", "e1", "background", None, b"x")
    refused = _refused(blobs, "s2", "e1", "composite", None, b"y")
    assert refused.status == 409 and "belongs to another page session" in str(refused)
    assert blobs["e1"].composite is None and blobs.held_bytes("s2") == 0


def test_layer_indices_as_the_browser_sends_them():
    assert blob_index("null") is None and blob_index("") is None and blob_index(None) is None
    assert blob_index("3") == 3
    for text in ("two", "1.5", "9" * 5000):
        with pytest.raises(BlobRefused, match="is not a whole number"):
            blob_index(text)
