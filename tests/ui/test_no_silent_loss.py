"""No silent loss (issue 11), through gradio_client against the launched app: masks the user made and did not save
are replaced by an example or a stored sample only on a second press; a stored sample saved with other inputs is
refused (and 'Save as a new sample' makes another); Save without Run shows what it stored; an example's masks never
follow other images into a Save; reasons reach the screen in the user's words; an unknown id in Compare is a plain
message; a pair's skip after Back keeps its answers and a pair's flag needs a note."""

from __future__ import annotations

import re
from pathlib import Path

from gradio_client import Client, handle_file
from PIL import Image

from masc_ui.workbench.examples import EXAMPLES_DIR, load_example

from .conftest import USERS
from .test_app_handlers import _load, _open, _values
from .test_pair_rate_handlers import MESSAGE, TOKEN, pairs  # noqa: F401 (`pairs` is a fixture)

COFFEE = EXAMPLES_DIR / "coffee-on-bricks"
LOAD_MSG, REF, OUT, PROMPT = 13, -6, -4, -3
"""Positions in /load_example's outputs."""


def _unchanged(shown: object) -> bool:
    """Whether an endpoint left this output as it was on screen (a Gradio update with no value)."""
    return isinstance(shown, dict) and shown.get("__type__") == "update" and "value" not in shown


def _client(served, user: str = "alice") -> Client:
    return Client(served.url, auth=(user, USERS[user]), verbose=False)


def _save(
    client: Client,
    ref,
    out,
    prompt: str,
    subject: str,
    names: list[str],
    dataset: str,
    method: str = "",
    *,
    new: bool = False,
) -> tuple[str, object]:
    """Save (or 'Save as a new sample') what is given, in the client's session: (message, score table)."""
    shown = client.predict(
        handle_file(str(ref)),
        None,
        handle_file(str(out)),
        prompt,
        subject,
        names,
        dataset,
        method,
        False,
        api_name="/save_new" if new else "/save",
    )
    return shown[0], shown[1]


def _sample_id(message: str) -> int:
    return int(re.search(r"sample #(\d+)", message).group(1))


def _mask_note(client: Client, ref, out, target: str = "out") -> str:
    return client.predict(target, 0.5, handle_file(str(ref)), None, handle_file(str(out)), api_name="/render")[3]


def _change_output_mask(client: Client, ref, out) -> None:
    """Replace the output's mask by a subject-name mask (offered, then applied): work the user has not saved."""
    images = (handle_file(str(ref)), None, handle_file(str(out)))
    client.predict("out", "cat", 0.9, 0.5, *images, api_name="/on_by_name")
    client.predict("out", 0.5, *images, api_name="/on_apply")
    assert _mask_note(client, ref, out).startswith("mask source: text-prompted")


def _stored(served, dataset: str, method: str) -> int:
    """A sample saved from the coffee example (with its masks and CLIP-I); its id."""
    ex = load_example("coffee-on-bricks")
    sample = served.wb.scoring.make_sample([ex.ref], ex.out, ex.prompt, ex.subject, [ex.ref_mask], ex.out_mask)
    return served.wb.saving.save(sample, user=None, dataset=dataset, method=method, names=["clip_i"]).sample_id


def test_unsaved_masks_are_replaced_only_when_asked_twice(served):
    c = _client(served)
    ref, out, _, _, _ = _load(c, "cat-on-grass")
    _change_output_mask(c, ref, out)
    refused = c.predict("coffee-on-bricks", "workbench", api_name="/load_example")
    msg = refused[LOAD_MSG]
    assert msg.startswith("⚠ not done yet: loading example '") and "masks you made and have not saved" in msg
    assert "(the output: subject-name mask, " in msg and "Press 'Load example' again" in msg
    assert _unchanged(refused[OUT]) and _unchanged(refused[PROMPT])  # the cat pair stays on screen
    assert _mask_note(c, ref, out).startswith("mask source: text-prompted")  # with the user's mask
    loaded = c.predict("coffee-on-bricks", "workbench", api_name="/load_example")
    assert loaded[LOAD_MSG].startswith("loaded example '") and Path(loaded[OUT]).name == "out.jpg"
    ref, out = loaded[REF], loaded[OUT]
    assert _mask_note(c, ref, out).startswith("mask source: imported")

    # Browse's Open: the same rule, the warning next to Open; a mask change after the warning asks again
    sid = _stored(served, "opened", "m-open")
    _change_output_mask(c, ref, out)
    first = _open(c, sid)
    assert first["open_msg"].startswith(f"⚠ not done yet: opening sample #{sid} would replace masks you made")
    assert "Press 'Open in the Score tab' again" in first["open_msg"] and _unchanged(first["prompt"])
    c.predict("out", 0.5, handle_file(ref), None, handle_file(out), api_name="/on_clear_mask")
    c.predict("out", 0.5, handle_file(ref), None, handle_file(out), api_name="/on_undo_mask")  # still unsaved
    assert _open(c, sid)["open_msg"].startswith("⚠ not done yet")
    opened = _open(c, sid)
    assert opened["open_msg"] == f"opened sample #{sid}" and opened["method"] == "m-open"

    # Saved masks are nothing to lose: after Save, an example loads at once
    _change_output_mask(c, opened["ref"], opened["out"])
    message, _ = _save(
        c, opened["ref"], opened["out"], opened["prompt"], opened["subject"], ["clip_i"], "opened", "m-open"
    )
    assert message.startswith(f"saved to sample #{sid}") and "1 new mask(s)" in message
    assert c.predict("cat-on-grass", "workbench", api_name="/load_example")[LOAD_MSG].startswith("loaded example")


def test_a_stored_sample_saved_with_other_inputs_is_refused_or_saved_as_new(served):
    store = served.wb.database.store
    sid = _stored(served, "edits", "m-edit")
    c = _client(served, "bob")
    shown = _open(c, sid)
    count = len(store.samples.list("edits"))
    refused, table = _save(
        c, shown["ref"], shown["out"], "a cup on the moon", shown["subject"], ["clip_i"], "edits", "m-edit"
    )
    assert refused.startswith(f"⚠ not saved: the prompt on screen differs from stored sample #{sid}'s")
    assert "'Save as a new sample'" in refused and _unchanged(table)
    assert len(store.samples.list("edits")) == count  # no new row
    message, table = _save(
        c, shown["ref"], shown["out"], "a cup on the moon", shown["subject"], ["clip_i"], "edits", "m-edit", new=True
    )
    new_id = _sample_id(message)
    assert message.startswith(f"saved as sample #{new_id} in 'edits'") and new_id != sid
    assert store.samples.get(new_id).prompt == "a cup on the moon" != store.samples.get(sid).prompt
    assert len(store.samples.list("edits")) == count + 1
    # Save without Run: the table shows the values just stored
    stored = {v.metric: v for v in store.metrics.history(new_id)}
    assert _values(table) == {"clip_i": f"{stored['clip_i'].value:.4f}"}


def test_an_examples_masks_never_follow_other_images_into_a_save(served, tmp_path: Path):
    c = _client(served)
    _load(c, "cat-on-grass")  # the example's masks are in the session (451x300 and 448x384 images)
    ref, out = tmp_path / "red.png", tmp_path / "blue.png"
    Image.new("RGB", (128, 96), "red").save(ref)
    Image.new("RGB", (80, 80), "blue").save(out)
    message, _ = _save(c, ref, out, "a red square", "square", ["clip_i", "cp"], "item6")
    sid = _sample_id(message)
    assert message.startswith(f"saved as sample #{sid} in 'item6': 0 new mask(s)")
    assert served.wb.database.store.masks.current(sid) == {}


def test_reasons_reach_the_screen_in_the_users_words(served):
    store = served.wb.database.store
    bob = _client(served, "bob")  # a new session: no masks
    message, table = _save(
        bob, COFFEE / "ref.jpg", COFFEE / "out.jpg", "a cup on bricks", "cup", ["cp", "clip_i"], "reasons"
    )
    sid = _sample_id(message)
    stored = {v.metric: v for v in store.metrics.history(sid)}
    assert (
        stored["cp"].value is None
        and stored["cp"].reason == "needs a mask of reference 1: draw them under Masks, then Run"
    )
    opened = _open(_client(served), sid)
    for shown in (table, opened["scores"]):
        assert "ref_masks" not in shown and "which sample" not in shown
    assert _values(opened["scores"])["cp"] == "n/a (needs a mask of reference 1: draw them under Masks, then Run)"


def test_compare_of_an_unknown_sample_is_a_plain_message(served):
    c = _client(served)
    _, message = c.predict(999, api_name="/compare_partners")
    assert "sample #999 is not in the database" in message and "store.samples" not in message
    shown = c.predict(999, _stored(served, "cmp", "m-cmp"), api_name="/compare")
    assert "sample #999 is not in the database" in shown[0] and "store.samples" not in shown[0]


def test_a_pair_skip_keeps_the_answers_and_a_flag_needs_a_note(served, pairs):  # noqa: F811
    alice = _client(served)
    first = alice.predict(api_name="/rate_pair_open")
    alice.predict(first[TOKEN], "left", "tie", False, False, api_name="/rate_pair_submit")
    back = alice.predict(api_name="/rate_pair_back")  # back to the answered pair, then S
    assert back[TOKEN] == first[TOKEN]
    kept = alice.predict(back[TOKEN], None, None, False, False, api_name="/rate_pair_skip")
    assert "kept your answer (CP left, PF tie): a skip never erases an answer" in kept[MESSAGE]
    answered = [t for t in served.wb.database.store.pairwise.tasks(rater="alice") if t.position == 1][0]
    assert {c: (j.status, j.winner) for c, j in answered.judgments.items()} == {
        "cp": ("rated", "left"),
        "pf": ("rated", "tie"),
    }
    unnoted = alice.predict(kept[TOKEN], None, None, False, False, "  ", api_name="/rate_pair_flag")
    assert unnoted[MESSAGE].startswith("⚠ not saved: type a reason, then flag: say what is wrong with this pair")
    assert _unchanged(unnoted[TOKEN])  # the pair stays on screen
