"""The Rate pairs tab's endpoints on the launched app (gradio_client, one session per client): answers stored
exactly, back and change, half answers refused, skip, flag, stale and foreign tokens refused, errors as messages.

Outputs of every endpoint: (token, who, prompt, refs, left, right, left video, right video, cp, pf, cp_bad, pf_bad,
note, progress, message); inputs of submit / skip: (token, cp, pf, cp_bad, pf_bad), of flag: the same and a note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gradio_client import Client
from PIL import Image

from masc_ui.workbench.database import StoreError
from masc_ui.workbench.examples import EXAMPLES_DIR

from .conftest import USERS

METHODS = ("method-x", "method-y", "method-z")
UPDATE = {"__type__": "update"}
(TOKEN, WHO, PROMPT, REFS, LEFT, RIGHT, LEFT_VIDEO, RIGHT_VIDEO, CP, PF, CP_BAD, PF_BAD, NOTE, PROGRESS, MESSAGE) = (
    range(15)
)


@pytest.fixture(scope="module")
def pairs(served, tmp_path_factory: pytest.TempPathFactory) -> dict[int, str]:
    """Two references x three methods: six pairs (each rater may get every one: K = 2). Sample id -> method."""
    folder = tmp_path_factory.mktemp("pair-images")
    wb, methods = served.wb, {}
    for r, name in enumerate(("cat-on-grass", "coffee-on-bricks")):
        ex = EXAMPLES_DIR / name
        for m, method in enumerate(METHODS):
            out = folder / f"{r}-{m}.png"
            Image.open(ex / "out.jpg").convert("RGB").rotate(90 * m).save(out)
            sample = wb.scoring.make_sample([ex / "ref.jpg"], out, f"the {name.split('-')[0]} outdoors", "subject")
            methods[wb.recorder.save(sample, {}, user=None, dataset="pairs-ui", method=method).sample_id] = method
    wb.samples.set_for_rating("pairs-ui", True, user=None)
    return methods


def _client(served, user: str) -> Client:
    return Client(served.url, auth=(user, USERS[user]), verbose=False)


def _tasks(served, user: str) -> dict[int, object]:
    """position -> the user's stored task (with its current judgments)."""
    return {x.position: x for x in served.wb.database.store.pairwise.tasks(rater=user)}


def _answers(task) -> dict[str, tuple]:
    return {c: (j.winner, j.both_bad, j.status) for c, j in task.judgments.items()}


def test_answers_are_stored_exactly_and_can_be_changed_after_going_back(served, pairs):
    carol = _client(served, "carol")  # a rater
    shown = carol.predict(api_name="/rate_pair_open")
    assert "carol" in shown[WHO] and "Pair 1" in shown[PROMPT] and len(shown[REFS]) == 1
    assert shown[LEFT]["value"] and shown[RIGHT]["value"] and shown[CP] is None and shown[PF] is None
    assert shown[LEFT]["visible"] and shown[RIGHT]["visible"]
    hidden = {**UPDATE, "value": None, "visible": False}
    assert shown[LEFT_VIDEO] == hidden and shown[RIGHT_VIDEO] == hidden  # images: the players hidden and empty
    assert "judged 0 / assigned 6 / total 6 pairs" in shown[PROGRESS]
    page = json.dumps(shown)
    assert "method-" not in page and not shown[TOKEN].isdigit()  # blind: no method, no sample id
    given = [("left", "tie", False, True), ("right", "right", False, False), ("tie", "left", True, False)]
    for n, (cp, pf, cp_bad, pf_bad) in enumerate(given, 1):
        before = len(served.wb.database.store.pairwise.current(rater="carol"))
        shown = carol.predict(shown[TOKEN], cp, pf, cp_bad, pf_bad, api_name="/rate_pair_submit")
        assert len(served.wb.database.store.pairwise.current(rater="carol")) == before + 2  # committed first
        assert "saved your answers" in shown[MESSAGE] and f"judged {n} /" in shown[PROGRESS]
        assert f"Pair {n + 1}" in shown[PROMPT]
    tasks = _tasks(served, "carol")
    for n, (cp, pf, cp_bad, pf_bad) in enumerate(given, 1):
        assert _answers(tasks[n]) == {"cp": (cp, cp_bad, "rated"), "pf": (pf, pf_bad, "rated")}

    back = carol.predict(api_name="/rate_pair_back")  # from pair 4 to pair 3, its answers on screen
    assert "back to your previous pair" in back[MESSAGE] and "Pair 3" in back[PROMPT]
    assert (back[CP], back[PF], back[CP_BAD], back[PF_BAD]) == ("tie", "left", True, False)
    back = carol.predict(api_name="/rate_pair_back")
    assert "Pair 2" in back[PROMPT] and (back[CP], back[PF]) == ("right", "right")
    changed = carol.predict(back[TOKEN], "left", "right", False, True, api_name="/rate_pair_submit")
    assert "saved your answers" in changed[MESSAGE] and "Pair 4" in changed[PROMPT]  # on to the open pair
    tasks = _tasks(served, "carol")
    assert _answers(tasks[2]) == {"cp": ("left", False, "rated"), "pf": ("right", True, "rated")}
    assert _answers(tasks[1]) == {"cp": ("left", False, "rated"), "pf": ("tie", True, "rated")}
    assert _answers(tasks[3]) == {"cp": ("tie", True, "rated"), "pf": ("left", False, "rated")}
    assert tasks[2].judgments["cp"].revision == 2 and tasks[2].judgments["pf"].revision == 2
    assert tasks[1].judgments["cp"].revision == 1
    assert all(j.seconds_spent is not None for x in tasks.values() for j in x.judgments.values())
    for x in tasks.values():  # what was stored is what was on screen: left/right as the rater saw them
        assert {pairs[x.left_sample_id], pairs[x.right_sample_id]} <= set(METHODS)


def test_half_answers_are_refused_and_kept_on_screen(served, pairs):
    bob = _client(served, "bob")
    first = bob.predict(api_name="/rate_pair_open")
    for cp, pf, missing in (
        ("left", None, "prompt following"),
        (None, "tie", "concept preservation"),
        (None, None, "concept preservation and prompt following"),
    ):
        refused = bob.predict(first[TOKEN], cp, pf, False, False, api_name="/rate_pair_submit")
        assert refused[MESSAGE].startswith("⚠ not saved: choose left, right or tie for " + missing), refused[MESSAGE]
        assert refused[PROMPT] == UPDATE and refused[CP] == UPDATE and refused[LEFT] == UPDATE  # kept as chosen
    refused = bob.predict(first[TOKEN], None, "tie", True, True, api_name="/rate_pair_submit")  # a flag is no answer
    assert "concept preservation" in refused[MESSAGE]
    assert served.wb.database.store.pairwise.current(rater="bob") == []
    again = bob.predict(first[TOKEN], "right", "tie", False, False, api_name="/rate_pair_submit")
    assert "saved your answers" in again[MESSAGE]
    assert _answers(_tasks(served, "bob")[1]) == {"cp": ("right", False, "rated"), "pf": ("tie", False, "rated")}


def test_skip_and_flag_store_their_status_and_move_on(served, pairs):
    alice = _client(served, "alice")
    first = alice.predict(api_name="/rate_pair_open")
    skipped = alice.predict(first[TOKEN], "left", None, False, False, api_name="/rate_pair_skip")
    assert "skipped the pair" in skipped[MESSAGE] and "Pair 2" in skipped[PROMPT]
    flagged = alice.predict(
        skipped[TOKEN], None, None, False, False, "  the left image is broken ", api_name="/rate_pair_flag"
    )
    assert "flagged the pair" in flagged[MESSAGE] and "Pair 3" in flagged[PROMPT] and flagged[NOTE] == ""
    tasks = _tasks(served, "alice")
    assert _answers(tasks[1]) == {c: (None, False, "skipped") for c in ("cp", "pf")}
    assert _answers(tasks[2]) == {c: (None, False, "flagged") for c in ("cp", "pf")}
    assert {j.note for j in tasks[2].judgments.values()} == {"the left image is broken"}
    back = alice.predict(api_name="/rate_pair_back")
    assert "Pair 2" in back[PROMPT] and "(your earlier answer: flagged)" in back[WHO]


def test_a_stale_or_foreign_token_stores_nothing(served, pairs):
    carol, bob = _client(served, "carol"), _client(served, "bob")
    mine = carol.predict(api_name="/rate_pair_open")
    theirs = bob.predict(api_name="/rate_pair_open")
    before = {u: served.wb.database.store.pairwise.current(rater=u) for u in ("carol", "bob")}
    foreign = bob.predict(mine[TOKEN], "left", "left", False, False, api_name="/rate_pair_submit")
    assert foreign[MESSAGE].startswith("⚠ nothing saved") and foreign[PROMPT] == UPDATE
    with pytest.raises(StoreError, match="no pairwise task with this token"):  # and the use case refuses it too
        served.wb.pairwise.submit("bob", mine[TOKEN], {"cp": "left", "pf": "left"})
    bob.predict(theirs[TOKEN], "tie", "tie", False, False, api_name="/rate_pair_submit")
    late = bob.predict(theirs[TOKEN], None, None, False, False, api_name="/rate_pair_skip")  # S right after Enter
    assert late[MESSAGE].startswith("⚠ nothing saved: the pair changed")
    assert served.wb.database.store.pairwise.current(rater="carol") == before["carol"]
    answered = {(j.task_id, j.criterion): j.status for j in served.wb.database.store.pairwise.current(rater="bob")}
    assert len(answered) == len(before["bob"]) + 2 and set(answered.values()) == {"rated"}


def test_a_failed_write_is_a_message_and_the_answers_stay(served, pairs, monkeypatch):
    carol = _client(served, "carol")
    shown = carol.predict(api_name="/rate_pair_open")
    before = served.wb.database.store.pairwise.current(rater="carol")

    def busy(*args, **kwargs):
        raise StoreError("the database is busy (another write held it too long); nothing was saved, try again")

    monkeypatch.setattr(served.wb.pairwise, "submit", busy)
    failed = carol.predict(shown[TOKEN], "left", "right", False, False, api_name="/rate_pair_submit")
    assert failed[MESSAGE] == (
        "⚠ not saved: the database is busy (another write held it too long); nothing was saved, try again"
    )
    assert all(failed[i] == UPDATE for i in (PROMPT, LEFT, RIGHT, LEFT_VIDEO, RIGHT_VIDEO, CP, PF, CP_BAD, PF_BAD))
    monkeypatch.undo()
    assert served.wb.database.store.pairwise.current(rater="carol") == before
    saved = carol.predict(shown[TOKEN], "left", "right", False, False, api_name="/rate_pair_submit")
    assert "saved your answers" in saved[MESSAGE]


def test_pair_endpoints_are_rater_endpoints_and_take_the_login(served):
    from masc_ui.ui.roles import RATER_PREFIX

    info = _client(served, "carol").view_api(return_format="dict", print_info=False)["named_endpoints"]
    pair_apis = {name for name in info if name.startswith("/rate_pair")}
    assert pair_apis == {
        "/rate_pair_open",
        "/rate_pair_submit",
        "/rate_pair_skip",
        "/rate_pair_flag",
        "/rate_pair_back",
    }
    assert all(name.lstrip("/").startswith(RATER_PREFIX) for name in pair_apis)
    for name in pair_apis:  # no input names the user: the acting user is the login
        assert not any("user" in (p.get("parameter_name") or "") for p in info[name]["parameters"]), name


def test_without_logins_the_pairs_tab_asks_for_one(served, tmp_path: Path):
    from masc_ui.ui.launch import free_port, serve
    from masc_ui.workbench import build_workbench

    settings = served.settings.replace(users=None, port=free_port(), data_dir=tmp_path / "open-data")
    wb = build_workbench(settings, models=served.wb.models)
    app = serve(wb, block=False)
    try:
        c = Client(app.local_url, verbose=False)
        opened = c.predict(api_name="/rate_pair_open")
        assert opened[PROMPT].startswith("**Log in to rate pairs.**") and "MASC_USERS" in opened[PROMPT]
        submitted = c.predict("x", "left", "left", False, False, api_name="/rate_pair_submit")
        assert submitted[MESSAGE] == "⚠ log in to rate pairs"
        assert wb.database.store.pairwise.tasks() == []
    finally:
        app.close()
        wb.close()
