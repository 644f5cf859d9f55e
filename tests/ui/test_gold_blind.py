"""Gold tasks through the launched app's API (gradio_client): what a rater receives for a gold task and for a normal
one is the same, byte for byte, apart from the images (their files) and the opaque token; the gold endpoints are the
admins'; and a rater cannot answer a task that was not handed to them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from gold_samples import save_samples
from gradio_client import Client

USERS = {"ann": "pw-ann", "rae": "pw-rae", "rob": "pw-rob"}
ROLES = {"ann": "admin", "rae": "rater", "rob": "rater"}
(SCREEN, WHO, PROMPT, REFS, OUT, CP, PF, REASON, PLAYER, PROGRESS, MESSAGE) = range(11)


@pytest.fixture(scope="module")
def served(demo_weights: Path, tmp_path_factory: pytest.TempPathFactory):
    from masc_ui.settings import Settings
    from masc_ui.ui.launch import free_port, serve
    from masc_ui.workbench import build_workbench

    data = tmp_path_factory.mktemp("gold-app")
    settings = Settings(
        profile="demo",
        demo_weights_dir=demo_weights,
        device="cpu",
        dtype="float32",
        data_dir=data,
        users=",".join(f"{u}:{p}:{ROLES[u]}" for u, p in USERS.items()),
        port=free_port(),
        gold_rate=0.5,
    )
    wb = build_workbench(settings)
    ids = save_samples(wb, tmp_path_factory.mktemp("gold-images"), 4, dataset="gold-ui")
    app = serve(wb, block=False)
    yield SimpleNamespace(url=app.local_url.rstrip("/"), wb=wb, ids=ids)
    app.close()
    wb.close()


def _client(served, user: str) -> Client:
    return Client(served.url, auth=(user, USERS[user]), verbose=False)


def _blind(reply: tuple) -> str:
    """A reply as JSON with the image files and the token left out: what must not tell gold and normal apart."""
    cleaned = list(reply)
    for i in (REFS, OUT):
        cleaned[i] = Path(str(cleaned[i])).suffix  # the file itself differs; its kind may not
    cleaned[SCREEN] = len(str(cleaned[SCREEN]))
    cleaned[PROGRESS] = re.sub(r"rated \d+", "rated N", str(cleaned[PROGRESS]))
    return json.dumps(cleaned, sort_keys=True)


def test_a_gold_task_reaches_the_rater_exactly_as_a_normal_one(served):
    """rae is shown a first task, then another sample is made gold (so that it is handed out second: one in every
    two tasks); every later task is shown by the Submit reply of the one before, so the replies compare one to one."""
    rae, store = _client(served, "rae"), served.wb.database.store
    reply = rae.predict(api_name="/rate_open")
    on_screen = served.wb.ratings.next_task("rae").sample_id  # the same rule picks the same task
    gold = next(sid for sid in served.ids if sid != on_screen)
    _client(served, "ann").predict("gold-ui", f"#{gold}", "cp", "3-4", "the same cat", api_name="/gold_mark")
    replies = []
    while reply[SCREEN]:
        before = {r.sample_id for r in store.ratings.current(rater="rae")}
        nxt = rae.predict(reply[SCREEN], 2, 3, "", api_name="/rate_submit")
        (answered,) = {r.sample_id for r in store.ratings.current(rater="rae")} - before
        replies.append((answered, nxt))
        reply = nxt
    assert [a.sample_id for a in served.wb.gold.answers(user=None, dataset="gold-ui")] == [gold]
    order = [sid for sid, _ in replies]
    assert sorted(order) == served.ids and order[1] == gold  # handed out second, like any other task
    # the reply that showed task k (k >= 2) is the Submit reply of task k - 1
    shown = {order[k]: _blind(replies[k - 1][1]) for k in range(1, len(order))}
    for sid, reply_text in shown.items():
        assert reply_text == shown[order[2]], (sid, reply_text)
    files = {order[k]: (Path(str(replies[k - 1][1][REFS])).name, str(replies[k - 1][1][OUT])) for k in range(1, 4)}
    assert len({refs for refs, _ in files.values()}) == 1  # the same reference file for all
    assert len({out for _, out in files.values()}) == 3  # each output its own file
    assert len({len(out) for _, out in files.values()}) == 1  # named alike


def test_the_gold_endpoints_are_refused_to_raters(served):
    rob = _client(served, "rob")
    with pytest.raises(Exception, match="gold_mark|Cannot find|not found|admin"):
        rob.predict("gold-ui", f"#{served.ids[0]}", "cp", "0", "", api_name="/gold_mark")
    assert all(a.sample_id != served.ids[0] for a in served.wb.gold.answers(user=None, dataset="gold-ui"))


def test_a_rater_cannot_answer_a_task_not_handed_to_them(served):
    """The browser names a task by the opaque token of the view it was handed; the sample behind it stays on the
    server. Another rater's token, a made-up one or a stale one stores nothing."""
    rob = _client(served, "rob")
    shown = rob.predict(api_name="/rate_open")
    others = _client(served, "ann").predict(api_name="/rate_open")[SCREEN]  # handed to ann, not to rob
    for token in (others, "x" * 16, str(served.ids[0]), f"#{served.ids[0]}"):
        reply = rob.predict(token, 1, 1, "", api_name="/rate_submit")
        assert "nothing saved: the task changed while you answered" in reply[MESSAGE], reply[MESSAGE]
    assert served.wb.database.store.ratings.current(rater="rob") == []
    done = rob.predict(shown[SCREEN], 1, 1, "", api_name="/rate_submit")  # the task handed to rob is answered
    assert done[MESSAGE] == "saved your answer (rated)"
    assert len(served.wb.database.store.ratings.current(rater="rob")) == 2


def test_the_agreement_and_leaderboard_views_say_who_counts(served):
    """After the tests above, rae and rob have answered tasks of `gold-ui`: the admin counts rae only."""
    admin = _client(served, "ann")
    *_, message = admin.predict("(all datasets)", "cp", None, 0, "rae", api_name="/agreement")
    assert message.endswith("; raters counted: only rae"), message
    *_, files, said = admin.predict("gold-ui", "method", 0, "rae", api_name="/leaderboard")
    assert said.endswith("; raters counted: only rae"), said
    markdown = next(Path(str(f)) for f in files if str(f).endswith(".md"))
    assert markdown.read_text().splitlines()[1] == "Raters counted: only rae."  # and in the files it writes
    *_, refused = admin.predict("(all datasets)", "cp", None, 0, "rae,nobody", api_name="/agreement")
    assert refused.startswith("⚠") and "no answers of 'nobody' in the database" in refused
