"""Where the Rate tab's answer events run: on the server's event loop for SQLite (a few milliseconds of in-process
queries; in worker threads they traded the interpreter lock with the loop under load, `rate_tab.on_event_loop`),
in worker threads for PostgreSQL (each query is a network round trip that must not hold up the loop)."""
from __future__ import annotations

import inspect

import pytest

ANSWER_EVENTS = {"rate_submit", "rate_skip", "rate_flag", "rate_flag_by_enter", "rate_back"}


def test_answer_events_run_on_the_loop_only_for_an_in_process_database(demo_weights, tmp_path, database_url,
                                                                         backend):
    from masc_ui.settings import Settings
    from masc_ui.ui.blocks import build_app
    from masc_ui.workbench import Workbench

    wb = Workbench.open(Settings(profile="demo", demo_weights_dir=demo_weights, device="cpu", dtype="float32",
                                 data_dir=tmp_path / "data", database_url=database_url))
    try:
        assert wb.ratings.database_in_process is (backend == "sqlite")
        demo = build_app(wb)
        fns = {fn.api_name: fn.fn for fn in demo.fns.values() if fn.api_name in ANSWER_EVENTS}
        assert set(fns) == ANSWER_EVENTS
        assert {name: inspect.iscoroutinefunction(fn) for name, fn in fns.items()} == \
            {name: backend == "sqlite" for name in ANSWER_EVENTS}
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
