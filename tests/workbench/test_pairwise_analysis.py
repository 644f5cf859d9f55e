"""The pairwise analysis of stored judgments (`masc-ui agreement --pairwise`, the Agreement tab, the leaderboard's
pairwise column): the stored data reach the statistics as given, and the CLI prints them."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import numpy as np
import pytest
from pairwise_samples import add_outputs

from masc_ui.analysis import PairwiseData, bradley_terry, elo_ratings, pairwise_rater_agreement, win_rate_matrix
from masc_ui.analysis.pairwise_data import PairJudgment
from masc_ui.cli import main
from masc_ui.errors import InputError
from masc_ui.settings import Settings
from masc_ui.workbench.database import Database
from masc_ui.workbench.pairwise import PairwiseTasks
from masc_ui.workbench.pairwise_analysis import (
    PairwiseAnalysis,
    accuracy_rows,
    bradley_terry_rows,
    win_rate_rows,
)
from storage import ExternalPairJudgment, open_store

STRENGTH = {"m0": 2.0, "m1": 0.0, "m2": -2.0}
T0 = dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)


@pytest.fixture()
def judged(tmp_path: Path):
    """Dataset `ds` (3 methods x 8 references), three imported raters voting by known strengths (their times out
    of insertion order), one app rater, metric values `cp` (follows the strengths) and `judge` (random); yields
    (data dir, store, the judgments as the test wrote them, in time order)."""
    store = open_store(None, tmp_path / "data")
    outputs = add_outputs(store, methods=("m0", "m1", "m2"), references=8)
    rng = np.random.default_rng(7)
    by_ref: dict[str, list] = {}
    for s in outputs:
        by_ref.setdefault(s.external_key.split("/")[0], []).append(s)
        store.metrics.record(
            s.id, "cp", STRENGTH[s.method] + rng.normal(0, 0.5), provenance={"model_id": "test", "code_version": "test"}
        )
        store.metrics.record_external(s.id, "judge", float(rng.integers(0, 5)), source="test-judge")
    expected = []
    for _r, rater in enumerate(("ext1", "ext2", "ext3")):
        items = []
        for k, group in enumerate(by_ref.values()):
            for i in range(3):
                for j in range(i + 1, 3):
                    left, right = (group[i], group[j]) if rng.random() < 0.5 else (group[j], group[i])
                    for criterion in ("cp", "pf"):
                        d = STRENGTH[left.method] - STRENGTH[right.method]
                        u = rng.random()
                        p_left = 1 / (1 + math.exp(-d)) * 0.8
                        winner = "left" if u < p_left else ("tie" if u < p_left + 0.2 else "right")
                        when = T0 + dt.timedelta(minutes=int(rng.integers(0, 10_000)))
                        items.append(
                            ExternalPairJudgment(
                                left.id,
                                right.id,
                                criterion,
                                winner,
                                judged_at=when,
                                both_bad=winner == "tie" and k == 0,
                            )
                        )
        store.pairwise.import_external(rater, items)
        expected += [(x.judged_at, rater, x) for x in items]
    keys = {s.id: f"ds/{s.external_key}" for s in outputs}
    methods = {s.id: s.method for s in outputs}
    tasks = PairwiseTasks(Database.of(store), Settings(rating_overlap=4))
    view = tasks.next_task("alice")
    tasks.skip("alice", view.token)
    view = tasks.next_task("alice")
    tasks.flag("alice", view.token, note="the pair is broken")
    expected.sort(key=lambda x: x[0])
    judgments = [
        PairJudgment(
            keys[x.left_sample_id],
            keys[x.right_sample_id],
            x.criterion,
            x.winner,
            rater,
            methods[x.left_sample_id],
            methods[x.right_sample_id],
        )
        for _, rater, x in expected
    ]
    yield tmp_path / "data", store, judgments, keys, outputs
    store.close()


def test_the_stored_judgments_reach_the_statistics_as_given(judged):
    _, store, judgments, keys, outputs = judged
    database = Database.of(store)
    source = PairwiseAnalysis(database).input(user=None, dataset="ds")
    assert source.data.judgments == tuple(judgments)  # rated only, in judged-time order, labelled, with methods
    assert (source.n_skipped, source.n_flagged) == (2, 2)
    assert source.n_both_bad == {
        c: sum(1 for j in judgments if j.criterion == c and j.winner == "tie" and j.left.split("/")[1] == "r0")
        for c in ("cp", "pf")
    }
    assert source.higher_is_better == {"cp": True, "judge": True}
    latest = store.metrics.latest(outputs[0].id)
    assert source.metric_values[keys[outputs[0].id]] == {"cp": latest["cp"].value, "judge": latest["judge"].value}
    report = PairwiseAnalysis(database).report(user=None, dataset="ds", n_boot=200, seed=3)
    data = PairwiseData(tuple(judgments))
    for part in report.criteria:
        fit = bradley_terry(data, part.criterion, n_boot=200, seed=3)
        assert part.bradley_terry.methods == fit.methods == ("m0", "m1", "m2")
        assert part.bradley_terry.strength == fit.strength and part.bradley_terry.tie == fit.tie
        assert [m for m, _ in sorted(fit.rank.items(), key=lambda x: x[1])] == ["m0", "m1", "m2"]  # recovered
        assert part.elo.rating == pytest.approx(elo_ratings(data, part.criterion).rating)  # time order
        assert np.array_equal(part.win_rate.rate, win_rate_matrix(data, part.criterion).rate, equal_nan=True)
        assert part.agreement == pairwise_rater_agreement(data, part.criterion, n_boot=200, seed=3)
        assert part.agreement.n_units == 24 and part.n_judgments == 72
        accuracy = {r.metric: r for r in part.accuracy}
        assert set(accuracy) == {"cp", "judge"}
        # the direct count: per pair the humans' majority of decisive votes; human ties left out
        votes: dict[tuple[str, str], list[str]] = {}
        for j in judgments:
            if j.criterion == part.criterion and j.winner != "tie":
                votes.setdefault(tuple(sorted((j.left, j.right))), []).append(j.left if j.winner == "left" else j.right)
        value = {label: store.metrics.latest(sid)["cp"].value for sid, label in keys.items()}
        scores, human_ties = [], 0
        for (a, b), winners in votes.items():
            wins_a, wins_b = winners.count(a), winners.count(b)
            if wins_a == wins_b:
                human_ties += 1
                continue
            scores.append(1.0 if (value[a] > value[b]) == (wins_a > wins_b) else 0.0)
        all_pairs = {tuple(sorted((j.left, j.right))) for j in judgments if j.criterion == part.criterion}
        human_ties += len(all_pairs) - len(votes)  # pairs with only tie votes
        assert accuracy["cp"].accuracy.value == pytest.approx(np.mean(scores))
        assert (accuracy["cp"].n_pairs, accuracy["cp"].n_human_ties) == (len(scores), human_ties)
        assert accuracy["cp"].accuracy.ci_low <= accuracy["cp"].accuracy.value <= accuracy["cp"].accuracy.ci_high
    headers, rows = bradley_terry_rows(report.criteria[0])
    assert headers[:3] == ["rank", "method", "theta"] and [r[1] for r in rows] == ["m0", "m1", "m2"]
    assert win_rate_rows(report.criteria[0])[0] == ["method", "m0", "m1", "m2"]
    assert [r[0] for r in accuracy_rows(report.criteria[0])[1]] == ["MaSC CP", "judge"]  # display names


def test_the_leaderboard_column_is_the_bradley_terry_strength(judged):
    _, store, judgments, _, _ = judged
    column = PairwiseAnalysis(Database.of(store)).column(user=None, dataset="ds", criterion="pf", n_boot=100, seed=1)
    fit = bradley_terry(PairwiseData(tuple(judgments)), "pf", n_boot=100, seed=1)
    assert column.values == fit.strength and column.ranks == fit.rank and column.n_votes == fit.n_votes
    assert column.higher_is_better and column.reason is None and "pf" in column.name


def test_without_votes_between_methods_there_is_no_ranking(tmp_path: Path):
    with open_store(None, tmp_path / "data") as store:
        outputs = add_outputs(store, methods=("m0", "m1"), references=2)
        same_method = [s for s in outputs if s.method == "m0"]
        store.pairwise.import_external(
            "ext", [ExternalPairJudgment(same_method[0].id, same_method[1].id, "cp", "left")]
        )
        database = Database.of(store)
        report = PairwiseAnalysis(database).report(user=None, dataset="ds", n_boot=0)
        (part,) = report.criteria
        assert part.bradley_terry is None and "two different known methods" in part.ranking_note
        assert "method ranking: n/a" in report.text() and part.accuracy == []
        column = PairwiseAnalysis(database).column(user=None, dataset="ds", n_boot=0)
        assert column.values == {} and "two different known methods" in column.reason
        for kwargs, message in (
            ({"criterion": "pf"}, "no pairwise judgments of 'pf'"),
            ({"criterion": "sc"}, "criterion must be one of cp, pf"),
            ({"metrics": ["cp"]}, "no values of metric"),
            ({"n_boot": -1}, "bootstrap resamples"),
            ({"dataset": "nope"}, "dataset 'nope' is not in the database"),
        ):
            with pytest.raises(InputError, match=message):
                PairwiseAnalysis(database).report(user=None, **{"dataset": "ds", "n_boot": 0, **kwargs})
    with open_store(None, tmp_path / "empty") as store:
        with pytest.raises(InputError, match="no pairwise judgments yet"):
            PairwiseAnalysis(Database.of(store)).report(user=None)


def test_cli_prints_the_report_as_text_and_json(judged, capsys):
    data_dir, store, *_ = judged
    args = ["agreement", "--pairwise", "--dataset", "ds", "--n-boot", "100", "--data-dir", str(data_dir)]
    assert main(args) == 0
    out = capsys.readouterr().out
    for text in (
        "Pairwise judgments of dataset 'ds' (2 skipped and 2 flagged",
        "== cp (concept preservation): 72",
        "Bradley-Terry (Davidson ties) on 'cp': 72 votes",
        "Elo on 'cp'",
        "Win rate of row vs column",
        "Rater agreement on 'cp': 24 pairs judged by >= 2 raters",
        "Metric pairwise accuracy",
        "human ties left out",
        "== pf (prompt following)",
    ):
        assert text in out
    assert main(args + ["--criterion", "pf", "--json", "--metrics", "cp"]) == 0
    payload = json.loads(capsys.readouterr().out)
    expected = (
        PairwiseAnalysis(Database.of(store))
        .report(user=None, dataset="ds", criterion="pf", metrics=["cp"], n_boot=100)
        .to_dict()
    )
    assert payload == json.loads(json.dumps(expected))
    assert [c["criterion"] for c in payload["criteria"]] == ["pf"]
    assert [m["method"] for m in payload["criteria"][0]["bradley_terry"]["methods"]] == ["m0", "m1", "m2"]
    assert [a["metric"] for a in payload["criteria"][0]["accuracy"]] == ["cp"]
    for extra, message in (
        (["--criterion", "sc"], "--criterion sc has no pairwise judgments"),
        (["--by", "method"], "--by is for the 0-4 ratings"),
    ):
        assert main(args + extra) == 2
        assert message in capsys.readouterr().err


def test_cli_exports_the_judgments(judged, tmp_path: Path, capsys):
    data_dir, store, judgments, *_ = judged
    target = tmp_path / "votes.jsonl"
    assert main(["export", "-o", str(target), "--pairwise", "--data-dir", str(data_dir)]) == 0
    assert f"{len(judgments) + 4} pairwise judgments written" in capsys.readouterr().out
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert {r["status"] for r in rows} == {"rated", "skipped", "flagged"}
    assert sum(r["status"] == "rated" for r in rows) == len(judgments)
    assert all("seconds" in r and "current" not in r for r in rows)  # the default: time on task, no history
    first = next(j for j in store.pairwise.current(rater="ext1") if j.status == "rated")
    right = first.sample_b_id if first.left_sample_id == first.sample_a_id else first.sample_a_id
    changed = "right" if first.winner != "right" else "left"
    store.pairwise.import_external(
        "ext1", [ExternalPairJudgment(first.left_sample_id, right, first.criterion, changed)]
    )  # ext1 changes one answer: its earlier revision goes to the history
    args = ["export", "-o", str(target), "--pairwise", "--history", "--no-time-on-task", "--data-dir", str(data_dir)]
    assert main(args) == 0
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert len(rows) == len(judgments) + 5 and all("seconds" not in r for r in rows)
    (old,) = [r for r in rows if not r["current"]]
    assert (old["rater"], old["winner"], old["revision"]) == ("ext1", first.winner, 1)
    assert old["replaced_at"] is not None
    for flag in ("--history", "--no-time-on-task"):
        assert main(["export", "-o", str(tmp_path / "s.csv"), flag, "--data-dir", str(data_dir)]) == 2
        assert f"{flag} is for the pairwise judgments export; add --pairwise" in capsys.readouterr().err
