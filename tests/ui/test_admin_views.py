"""The admin views over the launched app (gradio_client, as an admin and as a rater): Leaderboard, Compare and the
Agreement tab's pairwise results show exactly what `masc-ui leaderboard`, `Comparisons.compare` and `masc-ui agreement
--pairwise` give for the same stored dataset; bad input is a message next to the button; a rater's call is refused."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from gradio_client import Client

from masc_ui.analysis.numbers import column_digits, format_value
from masc_ui.cli import main
from masc_ui.workbench.agreement import SMALL_N, shown_name
from tests.admin_data import METHODS, add_judged_dataset

from .conftest import USERS

N_BOOT = 150
ADMIN_VIEWS = {
    "leaderboard": ["lb", "method", N_BOOT],
    "leaderboard_datasets": [None],
    "compare": [1, 2],
    "compare_partners": [1],
    "compare_take": [1],
    "pairwise_report": ["lb", "cp", N_BOOT],
    "pairwise_datasets": [None],
    "agreement_kind": ["pairwise"],
}


@pytest.fixture(scope="module")
def judged(served):
    return add_judged_dataset(served.wb.database.store)


def _md_cells(text: str) -> list[list[str]]:
    return [
        [c.strip().replace("\\|", "|") for c in line.strip().strip("|").split(" | ")]
        for line in text.splitlines()
        if line.startswith("|") and not line.startswith("| -")
    ]


def _cli(capsys, *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_leaderboard_shows_what_the_cli_prints(served, judged, client, capsys):
    caption, table, agreement, note, mask_note, plot, files, message = client.predict(
        "lb", "method", N_BOOT, api_name="/leaderboard"
    )
    md = _cli(capsys, "leaderboard", "--dataset", "lb", "--data-dir", str(served.data_dir), "--n-boot", str(N_BOOT))
    shown = [
        table["headers"],
        *[[str(c) for c in row] for row in table["data"]],
        agreement["headers"],
        *agreement["data"],
    ]
    keys = {shown_name(m): m for m in ("cp", "clip_i")}  # the grid names metrics by their display names

    def as_cli(cell: str) -> str:
        name, _, arrow = cell.rpartition(" ")
        return f"{keys[name]} {arrow}" if name in keys else keys.get(cell, cell)

    assert [[as_cli(c) for c in row] for row in shown] == _md_cells(md)
    assert "MaSC CP ↑" in table["headers"] and note == ""
    assert md.startswith(caption) and [r[0] for r in table["data"]] == list(METHODS)
    assert "human bt_cp ↑" in table["headers"] and "human cp ↑" in table["headers"]
    assert "tau vs human bt_cp" in agreement["headers"] and "3 method(s)" in message
    assert plot is not None
    by_suffix = {Path(f).name.split("by-method")[-1]: Path(f) for f in files}
    assert set(by_suffix) == {".md", ".csv", "-rank-agreement.csv", ".tex"}
    assert by_suffix[".md"].read_text(encoding="utf-8") == md
    csv_text = _cli(
        capsys,
        "leaderboard",
        "--dataset",
        "lb",
        "--data-dir",
        str(served.data_dir),
        "--n-boot",
        str(N_BOOT),
        "--format",
        "csv",
    )
    assert by_suffix[".csv"].read_text() + "\n" + by_suffix["-rank-agreement.csv"].read_text() == csv_text
    tex = _cli(
        capsys,
        "leaderboard",
        "--dataset",
        "lb",
        "--data-dir",
        str(served.data_dir),
        "--n-boot",
        str(N_BOOT),
        "--format",
        "latex",
    )
    assert by_suffix[".tex"].read_text() == tex
    by_category = client.predict("lb", "category", 0, api_name="/leaderboard")
    assert [r[0] for r in by_category[1]["data"]] == ["animal", "pet"]


def test_leaderboard_errors_are_messages(served, judged, client):
    *_, message = client.predict("no-such-set", "method", N_BOOT, api_name="/leaderboard")
    assert message.startswith("⚠") and "no-such-set" in message
    with pytest.raises(Exception, match="less than minimum value 0"):  # the input's bounds, checked by Gradio
        client.predict("lb", "method", -5, api_name="/leaderboard")
    *_, message = client.predict("", "method", N_BOOT, api_name="/leaderboard")
    assert message == "⚠ pick a dataset first"
    datasets, message = client.predict(None, api_name="/leaderboard_datasets")
    assert datasets["choices"] == [["lb", "lb"]] and datasets["value"] == "lb" and message == ""


def test_compare_shows_both_outputs_their_metrics_and_maps(served, judged, client):
    left, *others = [s for s in judged if s.external_key.startswith("r1/")]
    partner, message = client.predict(left.id, api_name="/compare_partners")
    assert partner["value"] == others[0].id and "2 other output(s)" in message
    assert partner["choices"] == [[f"#{s.id} {s.method} {s.external_key}", s.id] for s in others]
    out = client.predict(left.id, others[1].id, api_name="/compare")
    message, summary, refs, left_img, right_img, table, reasons = out[:7]
    maps = out[7:]
    assert message == "" and f"#{left.id}" in summary and "method `alpha`" in summary and "`gamma`" in summary
    expected = served.wb.compare.compare(left.id, others[1].id, user=None)
    assert table["headers"] == expected.table()[0] and table["data"] == expected.table()[1]
    assert [r[1] for r in table["data"]] == [
        format_value(v, column_digits([v, _stored(served, others[1].id, name)]))
        for name, v in (("cp", _stored(served, left.id, "cp")), ("clip_i", _stored(served, left.id, "clip_i")))
    ]
    assert reasons == ""  # every value is there: no n/a to explain
    assert len(refs) == 1 and left_img and right_img
    assert all(maps), "both sides show CP, best match, PF attention and correspondences"
    assert format_value(expected.scales.cosine[0], 3) in summary


def _stored(served, sample_id: int, metric: str) -> float:
    return served.wb.database.store.metrics.latest(sample_id)[metric].value


def test_compare_errors_are_messages(served, judged, client):
    first = judged[0]
    out = client.predict(first.id, first.id, api_name="/compare")
    assert out[0].startswith("⚠ pick two different outputs")
    other_ref = judged[-1]
    out = client.predict(first.id, other_ref.id, api_name="/compare")
    assert out[0].startswith("⚠") and "different reference images" in out[0]
    out = client.predict(None, first.id, api_name="/compare")
    assert out[0].startswith("⚠ pick a sample first")
    partner, message = client.predict(10**6, api_name="/compare_partners")
    assert message.startswith("⚠")
    taken = client.predict(first.id, api_name="/compare_take")
    assert taken[0] == str(first.id) and taken[1]["value"] == judged[1].id


def test_pairwise_results_show_what_the_cli_prints(served, judged, client, capsys):
    warnings, summary, ranking, win_rate, accuracy, text, message = client.predict(
        "lb", "pf", N_BOOT, api_name="/pairwise_report"
    )
    printed = _cli(
        capsys,
        "agreement",
        "--pairwise",
        "--dataset",
        "lb",
        "--criterion",
        "pf",
        "--n-boot",
        str(N_BOOT),
        "--data-dir",
        str(served.data_dir),
    )
    assert text.strip() == printed.strip()
    assert [r[1] for r in ranking["data"]] == list(METHODS)  # alpha strongest
    assert win_rate["headers"] == ["method", *METHODS]
    assert {r[0] for r in accuracy["data"]} == {"MaSC CP", "CLIP-I"}  # display names, as the ratings table
    assert "Human ties are left out" in summary and "36 judgments" in summary and "Krippendorff" in summary
    # 4 references x 3 methods: 12 output pairs, each judged by three raters; the ratings view's small-n rule
    shown = [line.removeprefix("- ⚠ ") for line in warnings.splitlines()]
    assert shown[:2] == [
        f"only 12 output pair(s) compare two different methods (fewer than {SMALL_N}): the method ranking "
        "(Bradley-Terry, Elo, win rates) and its CIs are not reliable yet; judge more pairs",
        f"only 12 output pair(s) were judged by two or more raters (fewer than {SMALL_N}): the raters' agreement "
        "on pairs is not reliable yet; have a second rater judge the pairs the first one judged",
    ]
    assert all(f"warning: {w}" in text for w in shown)
    *_, message = client.predict("no-such-set", "cp", N_BOOT, api_name="/pairwise_report")
    assert message.startswith("⚠") and "no-such-set" in message


def test_a_rater_is_refused_by_every_admin_view(served, judged):
    rater = Client(served.url, auth=("carol", USERS["carol"]), verbose=False)
    described = rater.view_api(print_info=False, return_format="dict")["named_endpoints"]
    http = httpx.Client(base_url=served.url, timeout=60)
    assert http.post("/login", data={"username": "carol", "password": USERS["carol"]}).status_code == 200
    for api, data in ADMIN_VIEWS.items():
        assert f"/{api}" not in described  # a rater's API description holds only the rating endpoints
        with pytest.raises(ValueError, match="Cannot find a function"):
            rater.predict(*data, api_name=f"/{api}")
        answer = http.post(f"/gradio_api/call/{api}", json={"data": list(data)})
        assert answer.status_code == 403 and "admin login" in answer.json()["detail"], (api, answer.text)
