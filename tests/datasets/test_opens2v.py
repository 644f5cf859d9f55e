"""OpenS2V-Eval's layout (videos folder, reference-images folder, JSON manifest), parsed without importing."""

import json

import pytest

from masc_ui.datasets.opens2v import nexus_class_labels, parse_opens2v
from masc_ui.errors import InputError


@pytest.fixture()
def layout(tmp_path):
    videos, images = tmp_path / "videos", tmp_path / "Images"
    (images / "singleobject" / "cup").mkdir(parents=True)
    videos.mkdir()
    for name in ("52.jpg", "53.jpg"):
        (images / "singleobject" / "cup" / name).write_bytes(b"jpg")
    for name in ("singleobj_1.mp4", "singleobj_2.webm", "extra.mp4", "twice.mp4", "twice.webm", "notes.txt"):
        (videos / name).write_bytes(b"video")
    manifest = {
        "singleobj_1": {
            "img_paths": ["singleobject/cup/52.jpg"],
            "prompt": " A teapot on a table. ",
            "synthesis_flag": "wrong",
            "class_label": ["Cup"],
        },
        "singleobj_2": {
            "img_paths": ["singleobject/cup/52.jpg", "singleobject/cup/53.jpg"],
            "class_label": ["Cup", "Cup"],
        },
        "no_video": {"img_paths": ["singleobject/cup/52.jpg"], "class_label": ["Cup"]},
        "twice": {"img_paths": ["singleobject/cup/52.jpg"], "class_label": ["Cup"]},
        "missing_image": {"img_paths": ["singleobject/cup/99.jpg"], "class_label": ["Cup"]},
        "escape": {"img_paths": ["../videos/extra.mp4"], "class_label": ["Cup"]},
        "mismatch": {"img_paths": ["singleobject/cup/52.jpg"], "class_label": ["Cup", "Dog"]},
        "no_labels": {"img_paths": ["singleobject/cup/52.jpg"]},
        "not_an_object": ["singleobject/cup/52.jpg"],
        "bad_prompt": {"img_paths": ["singleobject/cup/52.jpg"], "class_label": ["Cup"], "prompt": 3},
    }
    path = tmp_path / "Open-Domain_Eval.json"
    path.write_text(json.dumps(manifest))
    return videos, images, path


def test_entries_in_manifest_order_with_their_references(layout):
    videos, images, manifest = layout
    parsed = parse_opens2v(videos, images, manifest)
    assert [e.key for e in parsed.entries] == ["singleobj_1", "singleobj_2"]
    first, second = parsed.entries
    assert first.video == videos / "singleobj_1.mp4" and first.prompt == "A teapot on a table."
    assert first.refs == ((images / "singleobject/cup/52.jpg").resolve(),) and first.class_labels == ("Cup",)
    assert first.info == {"synthesis_flag": "wrong"}
    assert second.video.name == "singleobj_2.webm" and len(second.refs) == 2 and second.prompt is None
    assert parsed.unmatched_videos == [videos / "extra.mp4"]


def test_bad_entries_are_reported_with_their_key(layout):
    parsed = parse_opens2v(*layout)
    reasons = {p.where.split("[")[1].rstrip("]"): p.reason for p in parsed.problems}
    assert set(reasons) == {
        "no_video",
        "twice",
        "missing_image",
        "escape",
        "mismatch",
        "no_labels",
        "not_an_object",
        "bad_prompt",
    }
    assert reasons["no_video"].startswith("no video no_video.mp4")
    assert reasons["twice"] == "several videos for one key: twice.mp4, twice.webm; keep one"
    assert reasons["missing_image"].startswith("reference image 'singleobject/cup/99.jpg' not found")
    assert reasons["escape"] == "reference image '../videos/extra.mp4' lies outside the reference-images folder"
    assert reasons["mismatch"] == "img_paths has 1 item(s) but class_label 2; give one label per image"
    assert reasons["no_labels"] == "class_label must be a non-empty list, got None"
    assert "must be an object" in reasons["not_an_object"] and "prompt must be a string" in reasons["bad_prompt"]
    assert all(p.where.startswith("Open-Domain_Eval.json [") for p in parsed.problems)


def test_unusable_folders_and_manifests_raise(layout, tmp_path):
    videos, images, manifest = layout
    with pytest.raises(InputError, match="videos folder .* does not exist"):
        parse_opens2v(tmp_path / "nope", images, manifest)
    with pytest.raises(InputError, match="manifest .* does not exist"):
        parse_opens2v(videos, images, tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": [1,}')
    with pytest.raises(InputError, match="bad.json: invalid JSON at line 1"):
        parse_opens2v(videos, images, bad)
    bad.write_text("[1, 2]")
    with pytest.raises(InputError, match="must hold a JSON object"):
        parse_opens2v(videos, images, bad)


def test_nexus_labels_follow_opens2vs_key_rule():
    assert nexus_class_labels("singleface_3", ["Man", "Cup"]) == (None, "Cup")
    assert nexus_class_labels("faceobj_14", ["Woman"]) == (None,)
    assert nexus_class_labels("humanobj_2", ["Woman", "Dog"]) == ("human", "Dog")
    assert nexus_class_labels("singleobj_1", ["Man"]) == ("Man",)


def test_the_real_opens2v_manifest_shape_parses(tmp_path):
    """A manifest entry copied in shape from OpenS2V-Eval's Open-Domain_Eval.json (fields and types)."""
    (tmp_path / "v").mkdir()
    (tmp_path / "i" / "Images" / "multiface").mkdir(parents=True)
    (tmp_path / "i" / "Images" / "multiface" / "1.jpg").write_bytes(b"x")
    (tmp_path / "v" / "multiface_1.mp4").write_bytes(b"x")
    (tmp_path / "m.json").write_text(
        json.dumps(
            {
                "multiface_1": {
                    "img_paths": ["Images/multiface/1.jpg"],
                    "prompt": "Two people talk.",
                    "synthesis_flag": "right",
                    "class_label": ["Woman"],
                }
            }
        )
    )
    parsed = parse_opens2v(tmp_path / "v", tmp_path / "i", tmp_path / "m.json")
    assert [e.key for e in parsed.entries] == ["multiface_1"] and not parsed.problems
    assert nexus_class_labels(parsed.entries[0].key, parsed.entries[0].class_labels) == (None,)
