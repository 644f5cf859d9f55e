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
    score_actions,
    score_tab,
    status,
)
from .roles import guard_endpoints
from .users import user_of

DELETE_CACHE = (300, 3600)
"""Gradio's cache cleanup: every 5 minutes, the uploads and outputs of this app older than an hour are deleted
(an image left on screen longer must be uploaded again)."""
NO_EVENT_SUMMARY = 2**62
"""Events between two recomputations of Gradio's monitoring summary (`Queue.ANAYLTICS_CACHE_FREQUENCY`, read by
`Queue.compute_analytics_summary`): never, in practice, since the monitoring page is off."""


def build_app(wb: Workbench) -> gr.Blocks:
    """The app's Blocks for `wb` (not launched; see `masc_ui.ui.launch.launch_kwargs`)."""
    with gr.Blocks(title="MaSC Workbench", analytics_enabled=False, delete_cache=DELETE_CACHE) as app:
        with gr.Row():
            gr.Markdown("### MaSC Workbench — score, inspect and rate concept-driven generation", elem_id="app-title")
            gr.Button(
                "Log out",
                link="/logout",
                size="sm",
                scale=0,
                min_width=90,
                elem_id="logout",
                visible=wb.accounts.logins_enabled,
            )
        for warning in startup_warnings(wb.settings, wb.accounts):
            gr.HTML(f'<div class="demo-banner" id="security-warning">⚠ {html.escape(warning)}</div>')
        status_line = status.build(wb)
        role_marker = gr.HTML("", elem_id="role-marker", padding=False)
        with gr.Tabs(elem_id="tabs") as tabs:
            with gr.Tab("Score", id="score", elem_id="tab-score") as score_page:
                score = score_tab.build(wb, status_line)
            with gr.Tab("Rate", id="rate", elem_id="tab-rate") as rate:
                open_task, task_outputs = rate_tab.build(wb, rate)
            with gr.Tab("Rate pairs", id="pairs", elem_id="tab-pairs") as pairs_page:
                pairs = pair_rate_tab.build(wb, pairs_page)
            with gr.Tab("Browse and export", id="browse", elem_id="tab-browse") as browse:
                browse_ui = browse_tab.build(wb)
            with gr.Tab("Compare", id="compare", elem_id="tab-compare") as compare_page:
                compare_ui = compare_tab.build(wb)
            with gr.Tab("Agreement", id="agreement", elem_id="tab-agreement") as agreement_page:
                show_agreement, agreement_io = agreement_tab.build(wb, agreement_page)
            with gr.Tab("Leaderboard", id="leaderboard", elem_id="tab-leaderboard") as leaderboard_page:
                leaderboard_tab.build(wb, leaderboard_page)
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

        def pages_for(request: gr.Request):
            """Raters see only the Rate tab (their calls elsewhere are refused anyway)."""
            admin = wb.accounts.is_admin(user_of(request))
            # The Score tab stays mounted (hiding it breaks its image editor's script: "reading 'canvas'"); the
            # marker lets the CSS hide its button, and Gradio 6 leaves a hidden tab's button on screen anyway.
            shown = [gr.Tab(), *(gr.Tab(visible=admin) for _ in admin_pages[1:])]
            marker = "" if admin else '<span data-role="rater"></span>'
            return (*shown, gr.Tabs() if admin else gr.Tabs(selected="rate"), marker)

        admin_pages = [score_page, browse, agreement_page, compare_page, leaderboard_page]
        # The tabs a login may see first, then its task: a rater never glimpses the admin tabs.
        app.load(pages_for, None, [*admin_pages, tabs, role_marker]).then(open_task, None, task_outputs)
        app.load(status_text, None, [status_line])
        end_editor_session = editor_blobs.attach(app, wb.settings)
    # `api_open=False`: an event registered for the queue is reached only through it, so its concurrency limit
    # holds for every caller (Gradio otherwise also answers a direct `POST /gradio_api/run/<name>` for it, outside
    # the queue, off a Space). The events registered with `queue=False` (the Rate tab's answers, `rate_tab`) keep
    # that direct route, the one the page uses for them; every route asks for a login when logins are on.
    app.queue(default_concurrency_limit=8, api_open=False)
    # Gradio rebuilds a pandas summary of up to 10,000 past events after every event, for its monitoring page,
    # which this app turns off (`launch.launch_kwargs`): CPU that grows with the server's uptime on every answer.
    # Recompute it never in practice.
    app._queue.ANAYLTICS_CACHE_FREQUENCY = NO_EVENT_SUMMARY
    guard_endpoints(app, wb, for_raters=(open_task, status_text, pages_for, end_editor_session, *pairs.handlers))
    return app
