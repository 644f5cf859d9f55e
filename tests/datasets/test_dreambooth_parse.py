"""DreamBooth layout: the real prompts_and_classes.txt and photos (../shared/data), outputs made here."""

from __future__ import annotations

from pathlib import Path

import pytest
from dataset_trees import tiny_image

from masc_ui.datasets.dreambooth import parse_dreambooth, read_prompts_and_classes
from masc_ui.errors import InputError


def test_real_prompts_and_classes(shared_data: Path):
    p = read_prompts_and_classes(shared_data / "dreambooth/dataset/prompts_and_classes.txt")
    assert len(p.classes) == 30 and p.classes["red_cartoon"] == "cartoon" and p.classes["dog6"] == "dog"
    assert len(p.object_prompts) == 25 and len(p.live_prompts) == 25
    assert p.prompts_for("dog")[10] == "a {0} {1} wearing a red hat"
    assert p.prompts_for("teapot")[10] == "a {0} {1} with a wheat field in the background"
    assert sum(c in ("cat", "dog") for c in p.classes.values()) == 9


def test_real_subjects_with_generated_outputs(shared_data: Path, tmp_path: Path):
    outputs = tmp_path / "outputs"
    tiny_image(outputs / "sd" / "dog" / "10_0.png", seed=1)
    tiny_image(outputs / "sd" / "teapot" / "0_3.png", seed=2)
    tiny_image(outputs / "sd" / "teapot" / "99_0.png", seed=3)
    tiny_image(outputs / "sd" / "unicorn" / "0_0.png", seed=4)
    parsed = parse_dreambooth(shared_data / "dreambooth", outputs=outputs)
    by_key = {s.key: s for s in parsed.samples}
    dog = by_key["sd/dog-10_0"]
    assert dog.prompt == "a dog wearing a red hat" and dog.category == "live" and dog.subject == "dog"
    assert dog.info["prompt_subject"] == "dog" and dog.info["class"] == "dog"
    assert dog.info["generation_prompt"] == "a sks dog wearing a red hat" and dog.info["unique_token"] == "sks"
    assert [r.name for r in dog.refs] == ["00.jpg", "01.jpg", "02.jpg", "03.jpg", "04.jpg"]
    tea = by_key["sd/teapot-0_3"]
    assert tea.prompt == "a teapot in the jungle" and tea.category == "object" and tea.seed == 3
    assert all("sks" not in s.prompt.split() and "sks" not in s.info["prompt_subject"] for s in parsed.samples)
    reasons = sorted(str(p) for p in parsed.problems)
    assert reasons == [
        "sd/teapot/99_0.png: unknown prompt index: 99 (the subject has 25 prompts)",
        "sd/unicorn/0_0.png: unknown subject: 'unicorn' has no reference photos or no class in the dataset",
    ]


def test_without_outputs_says_so(shared_data: Path):
    parsed = parse_dreambooth(shared_data / "dreambooth" / "dataset", unique_token="zwx")
    assert parsed.samples == [] and parsed.problems == []
    assert any("no outputs folder given" in n for n in parsed.notes)


def test_errors(tmp_path: Path):
    with pytest.raises(InputError, match="prompts_and_classes.txt not found"):
        parse_dreambooth(tmp_path)
    (tmp_path / "prompts_and_classes.txt").write_text("Classes\n\nsubject_name,class\ndog,dog\n")
    with pytest.raises(InputError, match="lacks the object prompts, the live subject prompts"):
        parse_dreambooth(tmp_path)
