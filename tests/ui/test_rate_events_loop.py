"""Where the Rate tab's answer events run: on the server's event loop for SQLite (a few milliseconds of in-process
queries; in worker threads they traded the interpreter lock with the loop under load, `rate_tab.on_event_loop`),
in worker threads for PostgreSQL (each query is a network round trip that must not hold up the loop)."""

from __future__ import annotations

import inspect

import pytest

ANSWER_EVENTS = {"rate_submit", "rate_skip", "rate_flag", "rate_flag_by_enter", "rate_back"}


def test_answer_events_run_on_the_loop_only_for_an_in_process_database(demo_weights, tmp_path, database_url, backend):
    from masc_ui.settings import Settings
    from masc_ui.ui.blocks import build_app
    from masc_ui.workbench import build_workbench

    wb = build_workbench(
        Settings(
            profile="demo",
            demo_weights_dir=demo_weights,
            device="cpu",
            dtype="float32",
            data_dir=tmp_path / "data",
            database_url=database_url,
        )
    )
    try:
        assert wb.ratings.database_in_process is (backend == "sqlite")
        demo = build_app(wb)
        fns = {fn.api_name: fn.fn for fn in demo.fns.values() if fn.api_name in ANSWER_EVENTS}
        assert set(fns) == ANSWER_EVENTS
        assert {name: inspect.iscoroutinefunction(fn) for name, fn in fns.items()} == {
            name: backend == "sqlite" for name in ANSWER_EVENTS
        }
        # Gradio still finds the request parameter through the wrapper (it passes the login in).
        assert all("request" in inspect.signature(fn).parameters for fn in fns.values())
    finally:
        wb.close()


def test_the_wrapper_runs_the_handler_to_the_end_without_suspending():
    from masc_ui.ui.rate_tab import on_event_loop

    def handler(a, b=2, *, request=None):
        return a + b, request

    wrapped = on_event_loop(handler)
    assert inspect.iscoroutinefunction(wrapped) and inspect.signature(wrapped) == inspect.signature(handler)
    answer = wrapped(1, request="r")
    with pytest.raises(StopIteration) as finished:  # one step: the coroutine never yields to the loop midway
        answer.send(None)
    assert finished.value.value == (3, "r")


def test_answer_events_skip_the_queue_and_postprocess_their_outputs_in_the_handler(demo_weights, tmp_path):
    from masc_ui.settings import Settings
    from masc_ui.ui.blocks import build_app
    from masc_ui.workbench import build_workbench

    wb = build_workbench(
        Settings(
            profile="demo", demo_weights_dir=demo_weights, device="cpu", dtype="float32", data_dir=tmp_path / "data"
        )
    )
    try:
        demo = build_app(wb)
        found = {fn.api_name: (fn.postprocess, fn.queue) for fn in demo.fns.values() if fn.api_name in ANSWER_EVENTS}
        assert found == {name: (False, False) for name in ANSWER_EVENTS}  # postprocessed here, posted straight
    finally:
        wb.close()


def _process(demo, fn_index: int) -> list:
    """Gradio's own processing of event `fn_index` of `demo` (pre- and postprocessing, files to the cache), in a
    thread with an event loop of its own (the browser tests leave one running in this one)."""
    import asyncio
    import threading

    from gradio.state_holder import SessionState

    out: list = []
    thread = threading.Thread(
        target=lambda: out.append(asyncio.run(demo.process_api(fn_index, [], state=SessionState(demo), request=None)))
    )
    thread.start()
    thread.join()
    return out[0]["data"]


def test_postprocessed_here_sends_what_gradio_postprocessing_sends(tmp_path):
    """The same handler registered twice, once as Gradio postprocesses it, once with `postprocessed_here` and
    `postprocess=False`: the browser receives the same data (images as served files, markdown unindented, the
    value inside a property update processed, the session state not sent)."""
    import gradio as gr
    from PIL import Image

    from masc_ui.ui.rate_tab import postprocessed_here

    picture = tmp_path / "picture.png"
    Image.new("RGB", (4, 3), "red").save(picture)

    def handler():
        return (
            {"kept": 1},
            "  **bold**\n  line",
            picture,
            1,
            7,
            gr.update(value=str(picture), visible=False),
            gr.update(visible=True),
            None,
        )

    with gr.Blocks() as demo:
        outputs = [
            gr.State(None),
            gr.Markdown(),
            gr.Image(),
            gr.Radio([("a", 0), ("b", 1)]),
            gr.Textbox(),
            gr.Image(),
            gr.Markdown(),
            gr.Image(),
        ]
        gr.Button().click(handler, None, outputs)
        gr.Button().click(postprocessed_here(handler, outputs), None, outputs, postprocess=False)
    by_gradio, by_handler = _process(demo, 0), _process(demo, 1)
    assert by_handler == by_gradio
    assert by_gradio[1] == "**bold**\nline" and by_gradio[2]["orig_name"] == "picture.png" and by_gradio[4] == "7"
    assert by_gradio[5]["value"]["orig_name"] == "picture.png" and by_gradio[5]["visible"] is False
