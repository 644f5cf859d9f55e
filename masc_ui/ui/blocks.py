"""The whole app: banner + status line on top, then the tabs (one module each); every endpoint behind
`roles.guard_endpoints`."""

from __future__ import annotations

import html

import gradio as gr

from ..workbench import Workbench
from ..workbench.users import startup_warnings
from . import (
    agreement_tab,
    browse_tab,
    compare_tab,
    editor_blobs,
    leaderboard_tab,
    mask_panel,
    pair_rate_tab,
    rate_tab,
    raters_tab,
    role_view,
    score_actions,
    score_tab,
    status,
)
from .roles import guard_endpoints

LOGOUT_JS = "() => fetch('logout', {method: 'POST', credentials: 'same-origin'}).then(() => location.reload())"
"""The Log out button: `POST /logout` (the server ends the session; a GET logs nobody out), then the login page."""
DELETE_CACHE = (300, 3600)
"""Gradio's cache cleanup: every 5 minutes, the uploads and outputs of this app older than an hour are deleted
(an image left on screen longer must be uploaded again)."""
NO_EVENT_SUMMARY = 2**62
"""Events between two recomputations of Gradio's monitoring summary (`Queue.ANAYLTICS_CACHE_FREQUENCY`, read by
`Queue.compute_analytics_summary`): never, in practice, since the monitoring page is off."""


def build_app(wb: Workbench) -> gr.Blocks:
    """The app's Blocks for `wb` (not launched; see `masc_ui.ui.launch.launch_kwargs`)."""
    with gr.Blocks(title="MaSC Workbench", analytics_enabled=False, delete_cache=DELETE_CACHE) as app:
        with gr.Row() as header:
            title = gr.Markdown(
                "### MaSC Workbench — score, inspect and rate concept-driven generation", elem_id="app-title"
            )
            logout = gr.Button(
                "Log out", size="sm", scale=0, min_width=90, elem_id="logout", visible=wb.accounts.logins_enabled
            )
            logout.click(None, js=LOGOUT_JS)
        for warning in startup_warnings(wb.settings, wb.accounts):
            gr.HTML(f'<div class="demo-banner" id="security-warning">⚠ {html.escape(warning)}</div>')
        banners = status.build_banners(wb)
        status_line = status.build_line(wb)
        with gr.Tabs(elem_id="tabs") as tabs:
            with gr.Tab("Score", id="score", elem_id="tab-score"):
                score = score_tab.build(wb, status_line)
            with gr.Tab("Rate", id="rate", elem_id="tab-rate") as rate:
                open_task, task_outputs = rate_tab.build(wb, rate)
            with gr.Tab("Rate pairs", id="pairs", elem_id="tab-pairs") as pairs_page:
                pairs = pair_rate_tab.build(wb, pairs_page)
            with gr.Tab("Browse and export", id="browse", elem_id="tab-browse") as browse:
                browse_ui = browse_tab.build(wb)
            with gr.Tab("Compare", id="compare", elem_id="tab-compare"):
                compare_ui = compare_tab.build(wb)
            with gr.Tab("Agreement", id="agreement", elem_id="tab-agreement") as agreement_page:
                show_agreement, agreement_io = agreement_tab.build(wb, agreement_page)
            with gr.Tab("Leaderboard", id="leaderboard", elem_id="tab-leaderboard") as leaderboard_page:
                leaderboard_tab.build(wb, leaderboard_page)
            with gr.Tab("Raters", id="raters", elem_id="tab-raters") as raters_page:
                raters_tab.build(wb, raters_page)
        browse.select(browse_ui.on_refresh, browse_ui.inputs, browse_ui.outputs)
        agreement_page.select(show_agreement, agreement_io, agreement_io)
        browse_ui.sample_id.change(
            compare_ui.take, [browse_ui.sample_id], compare_ui.take_outputs, api_name="compare_take"
        )
        refresh_in, refresh_out = mask_panel.refresh_io(score.masks, score.ref_image, score.extra_refs, score.out_image)
        opened = [
            *score_actions.cleared_results(score),
            score.ref_image,
            score.extra_refs,
            score.out_image,
            score.prompt,
            score.subject,
            score.dataset,
            score.method,
            score.example,
            score.masks.session,
            score.load_msg,
            score.link,
            browse_ui.open_msg,
            tabs,
            score.out_video,
        ]
        browse_ui.open.click(
            browse_tab.open_handler(wb, score, browse_ui, tabs),
            [browse_ui.sample_id, score.masks.session],
            opened,
            api_name="open_sample",
        ).then(score.masks.refresh, refresh_in, refresh_out)

        def status_text():
            return wb.status().line()

        # No task is opened on load: a rater's page starts on the Rate tab, whose select event (fired when the tab
        # shows) opens it; a second opener would race it and leave the page showing a task that is not current.
        app.load(status_text, None, [status_line])
        end_editor_session = editor_blobs.attach(app, wb.settings)
        end_image_session = mask_panel.release_on_unload(app)
        # A rater's page holds these and nothing else (`role_view`): no admin tab, no status line, no admin event.
        role_view.show_raters(app, [header, *banners, rate, pairs_page])
        # A crowd study participant's page: the title and the Rate tab, nothing else (no Log out: they have no login).
        role_view.show_participants(app, [title, rate])
    # `api_open=False`: an event registered for the queue is reached only through it, so its concurrency limit
    # holds for every caller (Gradio otherwise also answers a direct `POST /gradio_api/run/<name>` for it, outside
    # the queue, off a Space). The events registered with `queue=False` (the Rate tab's answers, `rate_tab`) keep
    # that direct route, the one the page uses for them; every route asks for a login when logins are on.
    app.queue(default_concurrency_limit=8, api_open=False)
    # Gradio rebuilds a pandas summary of up to 10,000 past events after every event, for its monitoring page,
    # which this app turns off (`launch.launch_kwargs`): CPU that grows with the server's uptime on every answer.
    # Recompute it never in practice.
    app._queue.ANAYLTICS_CACHE_FREQUENCY = NO_EVENT_SUMMARY
    guard_endpoints(app, wb, for_raters=(open_task, end_editor_session, end_image_session, *pairs.handlers))
    return app
