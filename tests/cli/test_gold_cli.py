"""`masc-ui gold`: mark, list (table and JSON) and unmark gold tasks; a bad accepted answer is refused before anything
heavy is imported."""

from __future__ import annotations

import json

from gold_samples import save_samples
from test_cli_arguments import _refused

from masc_ui.cli import main
from masc_ui.workbench import build_workbench


def test_mark_list_and_unmark(demo_settings, tmp_path, capsys):
    with build_workbench(demo_settings) as wb:
        ids = save_samples(wb, tmp_path / "img", 3)
    data = ["--data-dir", str(demo_settings.data_dir)]
    args = ["gold", "mark", "--dataset", "d", "--sample", f"#{ids[1]}", "--criterion", "cp", "--accept", "3-4"]
    assert main([*args, "--note", "same cat", *data]) == 0
    assert capsys.readouterr().out.strip() == f"sample #{ids[1]} of 'd' is a gold task: cp accepts 3-4"
    assert main(["gold", "list", "--dataset", "d", "--json", *data]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"sample": f"#{ids[1]}", "kind": "gold", "criterion": "cp", "accepted": "3-4", "note": "same cat"}
    ]
    assert main(["gold", "unmark", "--dataset", "d", "--sample", f"#{ids[1]}", *data]) == 0
    assert "removed 1 gold mark(s)" in capsys.readouterr().out
    assert main(["gold", "list", "--dataset", "d", *data]) == 0
    assert "has no gold tasks yet" in capsys.readouterr().out
    assert main(["gold", "mark", "--dataset", "d", "--sample", "k9", "--criterion", "cp", "--accept", "1", *data]) == 2
    assert "dataset 'd' has no sample with key 'k9'" in capsys.readouterr().err


def test_a_bad_accepted_answer_is_refused_before_torch(tmp_path):
    args = ["gold", "mark", "--dataset", "d", "--sample", "k1", "--criterion", "cp", "--accept", "3-9"]
    rc, err, heavy = _refused([*args, "--data-dir", str(tmp_path / "data")])
    assert rc == 2 and "write one score 0-4 (e.g. 3) or a range low-high" in err, err
    assert heavy == []


def test_attention_checks_are_made_on_request(demo_settings, tmp_path, capsys):
    with build_workbench(demo_settings) as wb:
        save_samples(wb, tmp_path / "img", 2)
    data = ["--data-dir", str(demo_settings.data_dir)]
    assert main(["gold", "attention", "--dataset", "d", *data]) == 0
    assert "attention checks of 'd': 1 made, 0 already there (1 subject(s)" in capsys.readouterr().out
    assert main(["gold", "list", "--dataset", "d", "--json", *data]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {
            "sample": "attention:reference-as-output:cat",
            "kind": "attention",
            "criterion": "cp",
            "accepted": "4",
            "note": "the output is the subject's reference itself",
        }
    ]


def test_the_rater_report_prints_a_table_and_json(demo_settings, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MASC_MIN_SECONDS", "3")
    with build_workbench(demo_settings) as wb:
        ids = save_samples(wb, tmp_path / "img", 3)
        wb.database.store.ratings.ensure_rater("ann")
        for k, sid in enumerate(ids, 1):
            wb.ratings.submit("ann", sid, {"cp": 2, "pf": 2}, seconds_spent=1.0 + k, presentation_order=k)
    data = ["--data-dir", str(demo_settings.data_dir)]
    assert main(["raters", "--dataset", "d", "--n-boot", "0", *data]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "raters of 'd': agreement on cp, time floor 3 s, 0 bootstrap resamples"
    assert out[2].split("\t")[:8] == ["ann", "3", "0", "0", "3.0", "2.2", "1/3", "3"]
    assert out[-1] == "marked: none"
    assert main(["raters", "--dataset", "d", "--json", "--n-boot", "0", *data]) == 0
    (row,) = json.loads(capsys.readouterr().out)["raters"]
    assert (row["rater"], row["answers"], row["under_floor"], row["longest_identical_run"]) == ("ann", 3, 1, 3)
    assert main(["raters", "--dataset", "nope", *data]) == 2
    assert "dataset 'nope' is not in the database" in capsys.readouterr().err


def test_agreement_and_leaderboard_take_the_raters_who_count(demo_settings, tmp_path, capsys):
    with build_workbench(demo_settings) as wb:
        ids = save_samples(wb, tmp_path / "img", 4)
        for name, scores in (("ann", (4, 0, 4, 0)), ("ben", (3, 1, 3, 1))):
            wb.database.store.ratings.ensure_rater(name)
            for sid, score in zip(ids, scores, strict=True):
                wb.ratings.submit(name, sid, {"cp": score, "pf": score}, seconds_spent=5.0)
    data = ["--data-dir", str(demo_settings.data_dir), "--n-boot", "0"]
    assert main(["agreement", "--dataset", "d", "--raters", "ann", *data]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "raters counted: only ann"
    assert main(["agreement", "--dataset", "d", "--raters", "unmarked", "--json", *data]) == 0
    assert (
        json.loads(capsys.readouterr().out)["raters"]["text"]
        == "raters counted: all but the marked ones (none is marked)"
    )
    assert main(["leaderboard", "--dataset", "d", "--format", "csv", "--raters", "ben", *data]) == 0
    rows = capsys.readouterr().out.split("\n\n")[0].splitlines()
    assert (
        rows[0].endswith(",raters")
        and rows[1].startswith("m1,2,3.0,")
        and rows[1].endswith(",raters counted: only ben")
    )
    assert main(["leaderboard", "--dataset", "d", "--raters", "zed", *data]) == 2
    assert "no answers of 'zed' in dataset 'd'" in capsys.readouterr().err


def test_gold_pairs_are_marked_listed_unmarked_and_checks_made(demo_settings, tmp_path, capsys):
    with build_workbench(demo_settings) as wb:
        ids = save_samples(wb, tmp_path / "img", 3)
    data = ["--data-dir", str(demo_settings.data_dir)]
    pair = f"#{ids[2]},#{ids[0]}"
    args = ["gold", "pair", "--dataset", "d", "--pair", pair, "--criterion", "pf", "--accept", "a"]
    assert main([*args, "--note", "sharper", *data]) == 0
    assert capsys.readouterr().out.strip() == f"pair #{ids[2]},#{ids[0]} of 'd' is a gold pair: pf accepts a"
    assert main(["gold", "pair-list", "--dataset", "d", "--json", *data]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    # stored canonically: the first named sample (the larger id) is sample b, and it is the accepted one
    assert row == {
        "sample a": f"#{ids[0]}",
        "sample b": f"#{ids[2]}",
        "kind": "gold",
        "criterion": "pf",
        "accepted": "b",
        "note": "sharper",
    }
    assert main(["gold", "pair-unmark", "--dataset", "d", "--pair", pair, *data]) == 0
    assert "removed 1 gold mark(s) of pair" in capsys.readouterr().out
    assert main(["gold", "pair-list", "--dataset", "d", *data]) == 0
    assert "has no gold pairs yet" in capsys.readouterr().out
    assert main(["gold", "pair", "--dataset", "d", "--pair", f"#{ids[0]}", "--criterion", "cp", "--accept", "a", *data])
    assert "--pair: give two samples separated by a comma" in capsys.readouterr().err


def test_a_bad_pair_answer_is_refused_before_torch(tmp_path):
    args = ["gold", "pair", "--dataset", "d", "--pair", "k1,k2", "--criterion", "cp", "--accept", "left"]
    rc, err, heavy = _refused([*args, "--data-dir", str(tmp_path / "data")])
    assert rc == 2 and "--accept: a pair's accepted answer is a, b or tie; got 'left'" in err, err
    assert heavy == []
