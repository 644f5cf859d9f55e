"""DreamBench++ layout parsing: collection ids, keys, prompts, references, both human groups, judge values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dataset_trees import write_dreambench

from masc_ui.datasets.dreambench import collection_id, parse_dreambench, split_collection
from masc_ui.errors import InputError


def test_collection_id_follows_metrics_md():
    assert collection_id("animal", "00", "kitten") == "live_subject_animal_00_kitten"
    assert collection_id("human", "12", "Old Man") == "live_subject_human_12_old_man"
    assert collection_id("object", "03", "Red Backpack") == "object_03_red_backpack"
    assert collection_id("style", "01", "Van Gogh") == "style_01_van_gogh"
    assert split_collection("live_subject_human_12_old_man") == ("human", "12", "old man")
    assert split_collection("object_03_red_backpack") == ("object", "03", "red backpack")
    assert split_collection("nonsense") is None


def test_full_tree(dreambench_tree: Path):
    parsed = parse_dreambench(dreambench_tree, judge="gpt4o")
    assert parsed.problems == []
    assert len(parsed.samples) == 2 * 2 * 3
    by_key = {s.key: s for s in parsed.samples}
    s = by_key["dreambooth_sd/live_subject_animal_00_kitten-2"]
    assert s.subject == "kitten" and s.category == "animal" and s.method == "dreambooth_sd" and s.seed == 0
    assert s.prompt == "prompt file 2 for live_subject_animal_00_kitten"  # samples/<m>/text wins
    assert s.refs == (dreambench_tree / "images" / "animal" / "00.jpg",)  # images/ wins over src_image
    assert s.out == dreambench_tree / "samples/dreambooth_sd/tgt_image/live_subject_animal_00_kitten/2_0.png"
    assert by_key["blip_diffusion/object_03_red_backpack-0"].subject == "Red Backpack"
    # two groups x two criteria x two methods x 6 keys
    assert len(parsed.ratings) == 2 * 2 * 2 * 6
    raters = {r.rater for r in parsed.ratings}
    assert raters == {"dreambench:group1", "dreambench:group2"}
    r = [
        x
        for x in parsed.ratings
        if x.key == "blip_diffusion/object_03_red_backpack-2" and x.rater.endswith("2") and x.criterion == "pf"
    ]
    assert len(r) == 1 and r[0].score == (2 + 1 + 1) % 5
    assert {m.metric for m in parsed.metrics} == {"gpt4o_cp", "gpt4o_pf"}
    assert len(parsed.metrics) == 2 * 2 * 6
    m = [
        x for x in parsed.metrics if x.key == "dreambooth_sd/live_subject_animal_00_kitten-1" and x.metric == "gpt4o_cp"
    ]
    assert m[0].value == 2.0 and m[0].source == "data_gpt_rating/concept_preservation_full/dreambooth_sd.json"


def test_prompts_from_captions_and_refs_from_src_image(tmp_path: Path):
    root = write_dreambench(tmp_path / "db", images=False, human=False, gpt=False)
    for text in root.glob("samples/*/text/*/*.txt"):
        text.unlink()
    parsed = parse_dreambench(root)
    s = {x.key: x for x in parsed.samples}["dreambooth_sd/object_03_red_backpack-1"]
    assert s.prompt == "a red backpack in scene 1"
    assert s.refs == (root / "samples/dreambooth_sd/src_image/object_03_red_backpack/1_0.png",)
    assert any("no data_human_rating/" in n for n in parsed.notes)


def test_ratings_only_and_no_captions(tmp_path: Path):
    root = write_dreambench(tmp_path / "db", images=False, samples=False)
    import shutil

    shutil.rmtree(root / "captions")
    parsed = parse_dreambench(root, judge="judge-x")
    assert parsed.problems == []
    assert len(parsed.ratings) == 48 and {m.metric for m in parsed.metrics} == {"judge-x_cp", "judge-x_pf"}
    # every rated key becomes a ratings-only sample: subject and category from the collection id, no prompt
    assert len(parsed.samples) == 12 and all(s.out is None and s.refs == () for s in parsed.samples)
    s = {x.key: x for x in parsed.samples}["blip_diffusion/object_03_red_backpack-2"]
    assert (s.subject, s.category, s.method, s.prompt) == ("red backpack", "object", "blip_diffusion", None)
    assert s.info == {"collection": "object_03_red_backpack", "prompt_idx": 2}
    assert s.where == "data_human_rating/merged_data/group1/blip_diffusion-cp.json: key 'object_03_red_backpack-2'"


def test_ratings_only_with_captions_take_subject_and_prompt_from_them(tmp_path: Path):
    root = write_dreambench(tmp_path / "db", images=False, samples=False)
    parsed = parse_dreambench(root)
    s = {x.key: x for x in parsed.samples}["dreambooth_sd/object_03_red_backpack-1"]
    assert (s.subject, s.prompt, s.out) == ("Red Backpack", "a red backpack in scene 1", None)


def test_outputs_without_captions_use_the_collection_id(tmp_path: Path):
    root = write_dreambench(tmp_path / "db", human=False, gpt=False)
    import shutil

    shutil.rmtree(root / "captions")
    parsed = parse_dreambench(root)
    s = {x.key: x for x in parsed.samples}["dreambooth_sd/live_subject_animal_00_kitten-0"]
    assert s.subject == "kitten" and s.category == "animal"


def test_several_seeds_lowest_gets_the_rating_key(tmp_path: Path):
    from dataset_trees import tiny_image

    root = write_dreambench(tmp_path / "db", human=False, gpt=False)
    tiny_image(root / "samples/dreambooth_sd/tgt_image/object_03_red_backpack/1_7.png", seed=77)
    keys = {x.key: x.seed for x in parse_dreambench(root).samples}
    assert keys["dreambooth_sd/object_03_red_backpack-1"] == 0
    assert keys["dreambooth_sd/object_03_red_backpack-1@7"] == 7


def test_bad_rows_are_reported_and_skipped(tmp_path: Path):
    from dataset_trees import tiny_image

    root = write_dreambench(tmp_path / "db")
    group1 = root / "data_human_rating/merged_data/group1/dreambooth_sd-cp.json"
    data = json.loads(group1.read_text())
    data["object_03_red_backpack-0"] = 7
    data["object_03_red_backpack-1"] = 2.5
    data["no-index-here"] = 1
    group1.write_text(json.dumps(data))
    (root / "data_gpt_rating/prompt_following_full/blip_diffusion.json").write_text("{not json")
    tiny_image(root / "samples/dreambooth_sd/tgt_image/object_03_red_backpack/final.png", seed=1)
    tiny_image(root / "samples/dreambooth_sd/tgt_image/weird/0_0.png", seed=1)
    parsed = parse_dreambench(root)
    reasons = {str(p) for p in parsed.problems}
    assert (
        "data_human_rating/merged_data/group1/dreambooth_sd-cp.json: key 'object_03_red_backpack-0': "
        "bad score: 7 is not an integer 0..4"
    ) in reasons
    assert any("'object_03_red_backpack-1': bad score: 2.5" in r for r in reasons)
    assert any("'no-index-here': bad key" in r for r in reasons)
    assert any(
        r.startswith("data_gpt_rating/prompt_following_full/blip_diffusion.json: not valid JSON") for r in reasons
    )
    assert any("final.png: unexpected file name" in r for r in reasons)
    assert any("weird/0_0.png: unknown collection 'weird'" in r for r in reasons)
    assert len(parsed.problems) == 6
    assert len(parsed.samples) == 12  # the rest still imports


def test_folder_errors(tmp_path: Path):
    with pytest.raises(InputError, match="not found"):
        parse_dreambench(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="none of captions/"):
        parse_dreambench(tmp_path / "empty")
    write_dreambench(tmp_path / "ok")
    with pytest.raises(InputError, match="judge name"):
        parse_dreambench(tmp_path / "ok", judge="gpt 4o")


def test_published_gpt_ratings_are_values_of_the_dreambench_judge(tmp_path: Path):
    """Without a judge name the published GPT-4o ratings are `dbpp_cp` / `dbpp_pf` values, with the scripts' model
    and rubric template as provenance: the same metric the judge computes here with that model."""
    from masc_ui.metrics.judges.dreambench import template

    root = write_dreambench(tmp_path / "db", images=False, samples=False, human=False)
    style = {"style_01_van_gogh-0": 3, "style_01_van_gogh-1": 4}
    (root / "data_gpt_rating" / "concept_preservation_full" / "dreambooth_sd.json").write_text(
        json.dumps({"object_03_red_backpack-1": 2, **style})
    )
    parsed = parse_dreambench(root)
    assert parsed.problems == []
    assert {m.metric for m in parsed.metrics} == {"dbpp_cp", "dbpp_pf"}
    by = {(m.key, m.metric): m for m in parsed.metrics}
    cp = by["dreambooth_sd/object_03_red_backpack-1", "dbpp_cp"]
    assert cp.value == 2.0 and cp.model_id == "gpt-4o-2024-05-13" and cp.rating_range == (0.0, 4.0)
    assert cp.params["template_version"] == template("cp", "subject").version and cp.params["rubric"] == "subject"
    assert cp.params["template_sha256"] == template("cp", "subject").sha256
    styled = by["dreambooth_sd/style_01_van_gogh-1", "dbpp_cp"]
    assert styled.params["rubric"] == "style" and styled.params["template_sha256"] == template("cp", "style").sha256
    pf = by["blip_diffusion/object_03_red_backpack-1", "dbpp_pf"]
    assert pf.params["template_version"].endswith("/pf-text") and "rubric" not in pf.params
    named = parse_dreambench(root, judge="gpt4o")
    assert {m.metric for m in named.metrics} == {"gpt4o_cp", "gpt4o_pf"}
    assert all(m.model_id is None and m.params == {} for m in named.metrics)
