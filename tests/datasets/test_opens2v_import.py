"""`masc-ui import PATH --format opens2v`: OpenS2V-Eval's layout (JSON manifest, reference images, generated MP4/WebM
videos made here) into the database; idempotent; bad entries (missing image, no video, a truncated video) reported
with their key; samples keyed `<method>/<key>` with their class labels, category and video info."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from masc_ui.cli import main
from masc_ui.datasets import read_layout
from masc_ui.errors import InputError
from tests.video_files import encode_video, synthetic_frames


def write_opens2v(root: Path, method: str = "Phantom") -> tuple[Path, Path]:
    """An OpenS2V-Eval root (manifest + Images/) and a videos folder named after `method`."""
    frames = synthetic_frames(6)
    images = root / "Images" / "singleobj"
    images.mkdir(parents=True)
    Image.fromarray(frames[0]).save(images / "cup.jpg")
    Image.fromarray(frames[3]).save(images / "dog.png")
    (root / "Images" / "woman").mkdir()
    Image.fromarray(frames[5]).save(root / "Images" / "woman" / "w.jpg")
    videos = root / method
    videos.mkdir()
    (videos / "singleobj_1.mp4").write_bytes(encode_video(frames, "mp4"))
    (videos / "singleobj_2.webm").write_bytes(encode_video(frames[::-1], "webm"))
    (videos / "faceobj_3.mp4").write_bytes(encode_video(frames[1:], "mp4"))
    whole = encode_video(synthetic_frames(40), "mp4")
    (videos / "broken_4.mp4").write_bytes(whole[: len(whole) // 2])
    (videos / "stray_9.mp4").write_bytes(encode_video(frames[:2], "mp4"))
    manifest = {
        "singleobj_1": {
            "img_paths": ["Images/singleobj/cup.jpg"],
            "class_label": ["Cup"],
            "prompt": "A cup on a table.",
            "synthesis_flag": "real",
        },
        "singleobj_2": {
            "img_paths": ["Images/singleobj/cup.jpg", "Images/singleobj/dog.png"],
            "class_label": ["Cup", "Dog"],
            "prompt": "A dog next to a cup.",
        },
        "faceobj_3": {
            "img_paths": ["Images/woman/w.jpg", "Images/singleobj/cup.jpg"],
            "class_label": ["Woman", "Cup"],
            "prompt": "A woman holds a cup.",
        },
        "broken_4": {"img_paths": ["Images/singleobj/cup.jpg"], "class_label": ["Cup"], "prompt": "A cup."},
        "missing_5": {"img_paths": ["Images/singleobj/none.jpg"], "class_label": ["Cup"]},
        "novideo_6": {"img_paths": ["Images/singleobj/cup.jpg"], "class_label": ["Cup"]},
    }
    path = root / "Open-Domain_Eval.json"
    path.write_text(json.dumps(manifest))
    return path, videos


def _common(tmp_path: Path) -> list[str]:
    return ["--data-dir", str(tmp_path / "data")]


def test_import_opens2v_twice_reports_bad_entries_by_key(tmp_path: Path, capsys):
    manifest, videos = write_opens2v(tmp_path / "OpenS2V-Eval")
    args = [
        "import",
        str(manifest),
        "--format",
        "opens2v",
        "--dataset",
        "s2v",
        "--videos",
        str(videos),
        *_common(tmp_path),
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "samples 3 imported, 0 already present" in out and "3 skipped" in out
    assert "skipped Open-Domain_Eval.json [missing_5]: reference image 'Images/singleobj/none.jpg' not found" in out
    assert "skipped Open-Domain_Eval.json [novideo_6]: no video novideo_6.mp4" in out
    assert "skipped Open-Domain_Eval.json [broken_4]: unreadable video, image or mask: video broken_4.mp4" in out
    assert "stray_9.mp4" in out and "have no key in Open-Domain_Eval.json" in out
    assert main(args) == 0
    assert "samples 0 imported, 3 already present" in capsys.readouterr().out

    from storage import open_store

    with open_store(None, tmp_path / "data") as store:
        samples = {s.external_key: s for s in store.samples.list("s2v")}
        assert set(samples) == {"Phantom/singleobj_1", "Phantom/singleobj_2", "Phantom/faceobj_3"}
        one, two, face = (samples[f"Phantom/{k}"] for k in ("singleobj_1", "singleobj_2", "faceobj_3"))
        assert one.method == "Phantom" and one.category == "singleobj" and one.prompt == "A cup on a table."
        assert one.subject == "Cup" and two.subject == "Cup and Dog" and len(two.references) == 2
        assert store.images.media_type(two.output) == "video/webm"
        assert store.images.read(one.output) == (videos / "singleobj_1.mp4").read_bytes()
        assert one.info["video"]["frame_count"] == 6 and face.info["video"]["frame_count"] == 5
        assert one.info["synthesis_flag"] == "real" and one.info["opens2v_key"] == "singleobj_1"
        assert face.info["class_label"] == ["Woman", "Cup"] and face.info["ref_labels"] == [None, "Cup"]


def test_the_manifest_folder_and_defaults(tmp_path: Path):
    manifest, videos = write_opens2v(tmp_path / "root", method="videos")
    parsed = read_layout("opens2v", manifest.parent)  # the folder: its one manifest, videos/ next to it
    assert [e.key for e in parsed.samples][:2] == ["videos/singleobj_1", "videos/singleobj_2"]
    (manifest.parent / "Human-Domain_Eval.json").write_text("{}")
    with pytest.raises(InputError, match="must hold exactly one .json manifest"):
        read_layout("opens2v", manifest.parent)
    moved = videos.rename(manifest.parent / "elsewhere")
    with pytest.raises(InputError, match="pass --videos DIR"):
        read_layout("opens2v", manifest)
    assert {e.method for e in read_layout("opens2v", manifest, videos=moved, method="ConsisID").samples} == {"ConsisID"}
    with pytest.raises(InputError, match="takes no option"):
        read_layout("opens2v", manifest, outputs=tmp_path)
