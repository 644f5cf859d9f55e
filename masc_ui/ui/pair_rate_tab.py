"""Rate pairs tab: blind pairwise judgments (left / right / tie per criterion, "both bad" as a flag), keyboard
first (`KEYS_JS`), over `masc_ui.workbench.pairwise.PairwiseTasks`.

The browser knows a task only by its opaque token; every answer is checked against the session's task on screen
(a key pressed while the previous answer was on its way is refused, not stored on the next task) and, by the use
case, against the acting user (a token of another rater is refused). The acting user is always the request's
login. An answer is committed before the next pair is shown; a refused or failed answer leaves the pair and the
chosen answers on screen with a message next to the buttons.

A video output plays in a player in place of its image (`output_media`), the two clips side by side, looping
(autoplay, which the browser allows once the rater has pressed a key or clicked). The players are built visible and
hidden by the handler for an image output: Gradio's video frontend throws ("reading 'canvas'") when a player built
hidden gets an update before it was ever shown.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import gradio as gr

from ..errors import InputError, WorkbenchError
from ..workbench import Workbench
from ..workbench.pairwise import QUESTIONS, PairProgress, PairTaskView
from ..workbench.ratings import CRITERION_NAMES, AnsweredElsewhere, criteria
from .feedback import warn
from .plain_text import literal
from .rate_tab import RATING_CONCURRENCY
from .users import user_of

WINNER_CHOICES = [("← Left", "left"), ("↓ Tie", "tie"), ("→ Right", "right")]
"""(label, stored winner) of each criterion's radio, in the order of their keys on the keyboard."""
SHORTCUTS = (
    "**Keyboard:** <span class='kbd'>←</span> left · <span class='kbd'>→</span> right · "
    "<span class='kbd'>↓</span> tie for the highlighted question (then the next one is highlighted) · "
    "<span class='kbd'>↑</span> previous question · <span class='kbd'>X</span> both bad · "
    "<span class='kbd'>Enter</span> submit · <span class='kbd'>S</span> skip · <span class='kbd'>F</span> "
    "flag · <span class='kbd'>B</span> back to the previous pair"
)
LOG_IN = (
    "**Log in to rate pairs.** No rater logins are configured: set `MASC_USERS=alice:pw,...` or "
    "`MASC_USERS_FILE` and restart the app; the app then asks for a login."
)
IMAGE_HEIGHT = "clamp(170px, calc(100vh - 640px), 420px)"
"""Height of the reference and of each output, side by side in one row at one size (the reference whole, not a
thumbnail: concept preservation is judged against it): what the window leaves after the questions and buttons, so
that they, the note and the message under the buttons stay in view on an 800 x 900 screen, as in the Rate tab."""

# The Rate tab's keys (page_assets.KEYBOARD_JS) act only while #rate-panel is visible, these only while #pair-panel
# is: the two tabs never both answer a key. The highlight follows the Rate tab's rule: an answer (key or mouse) moves
# it to the next question still open (after the last it stays there); once the server has answered any event of the
# tab (`window.mascPairSettle`, `SETTLE_JS`) it goes to the first question without an answer: the first on a new
# pair, the missing one after a refused half answer.
KEYS_JS = """
if (!window.mascPairKeys) {
  window.mascPairKeys = true;
  const order = %(criteria)s;
  const winners = {arrowleft: 'left', arrowright: 'right', arrowdown: 'tie'};
  let active = 0;
  let settling = false;
  let keying = false;
  const visible = () => { const p = document.getElementById('pair-panel'); return p && p.offsetParent !== null; };
  const mark = () => order.forEach((c, i) => {
    const box = document.getElementById('pair-box-' + c);
    if (box) box.classList.toggle('pair-active', i === active);
  });
  const press = (id) => { const b = document.getElementById(id); if (b) b.click(); };
  const answered = (i) => !!document.querySelector('#pair-' + order[i] + ' input[type=radio]:checked');
  const open = (from) => order.map((_, i) => i).filter((i) => i >= from && !answered(i));
  const firstOpen = () => Math.max(0, order.findIndex((_, i) => !answered(i)));
  const after = (i) => {
    const later = open(i + 1);
    return later.length ? later[0] : open(0).length ? open(0)[0] : Math.min(i + 1, order.length - 1);
  };
  const settle = () => { if (!settling) return; settling = false; active = firstOpen(); mark(); };
  window.mascPairAnswers = 0;  // the tab's events the server has answered (what a test of the page waits for)
  window.mascPairSettle = () => { window.mascPairAnswers += 1; settling = true; setTimeout(settle, 0); };
  const choose = (winner) => {
    const box = document.getElementById('pair-' + order[active]);
    const input = box && box.querySelector('input[type=radio][value="' + winner + '"]');
    if (!input) return;
    keying = true;
    try { input.click(); } finally { keying = false; }
  };
  const toggleBad = () => {
    const input = document.querySelector('#pair-bad-' + order[active] + ' input[type=checkbox]');
    if (input) input.click();
  };
  document.addEventListener('keydown', (e) => {
    if (!visible() || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.tagName === 'TEXTAREA' || (t.tagName === 'INPUT' && !['radio', 'checkbox'].includes(t.type)))) return;
    settle();
    const k = e.key.toLowerCase();
    if (k in winners) { const i = active; choose(winners[k]); active = after(i); }
    else if (k === 'arrowup') active = Math.max(active - 1, 0);
    else if (k === 'x') toggleBad();
    else if (k === 'enter') press('pair-submit');
    else if (k === 's') press('pair-skip');
    else if (k === 'f') {
      const note = document.querySelector('#pair-note textarea, #pair-note input');
      press('pair-flag');
      if (note && !note.value.trim()) note.focus();
    }
    else if (k === 'b') press('pair-back');
    else return;
    e.preventDefault();
    e.stopPropagation();
    mark();
  }, true);
  // A mouse answer moves the highlight on too.
  document.addEventListener('change', (e) => {
    const i = order.findIndex((c) => e.target.closest && e.target.closest('#pair-' + c));
    if (i >= 0 && e.target.type === 'radio' && !keying) { active = after(i); mark(); }
  }, true);
  // A warning under the buttons (nothing saved, an answer missing) is brought into view, as in the Rate tab.
  let warned = '';
  const reveal = () => {
    const box = document.getElementById('pair-message');
    const text = box ? box.innerText.trim() : '';
    if (text.startsWith('\u26a0') && text !== warned && visible()) box.scrollIntoView({block: 'nearest'});
    warned = text;
  };
  new MutationObserver(() => { mark(); reveal(); }).observe(document.documentElement,
                                                            {childList: true, subtree: true, characterData: true});
}
"""
SETTLE_JS = "() => { window.mascPairSettle && window.mascPairSettle(); }"
"""Run in the page after every event of the tab has answered: the highlight goes to the first open question."""
CSS = """
#pair-panel .pair-line p {margin:0}
#pair-panel #pair-prompt p {margin:2px 0;font-size:1.05em}
#pair-message {min-height:1.6em;font-weight:600}
#pair-panel .pair-active {outline:3px solid #4a7dff;outline-offset:3px;border-radius:8px}
#pair-keys {display:none}
"""


@dataclass
class PairState:
    """Per session (kept on the server): the token of the task on screen and when it appeared. Updated in place,
    so a rater's next event sees the task the previous one moved on to."""

    token: str = ""
    shown_at: float = 0.0
    answered_as: tuple = ()
    """The stored answers the screen was built on (`PairTaskView.answered_as`), checked by the use case."""

    def show(self, view: PairTaskView | None) -> None:
        self.token = "" if view is None else view.token
        self.shown_at = time.time() if view is not None else 0.0
        self.answered_as = () if view is None else view.answered_as

    def seconds_spent(self) -> float | None:
        return max(0.0, time.time() - self.shown_at) if self.shown_at else None


@dataclass
class PairTab:
    """What the app wires: the handlers raters may call (for `roles.guard_endpoints`)."""

    handlers: list[Callable] = field(default_factory=list)


def _player(label: str, elem_id: str) -> gr.Video:
    """A player of a video output, built visible (see the module docstring)."""
    return gr.Video(
        label=label,
        height=IMAGE_HEIGHT,
        interactive=False,
        loop=True,
        autoplay=True,
        visible=True,
        elem_id=elem_id,
        buttons=["fullscreen"],
    )


def output_media(view: PairTaskView | None) -> tuple:
    """Updates of (left image, right image, left player, right player) for `view`: each side's video in its player
    (its image hidden), or its image (the player hidden and emptied); with no view, empty images and no players."""
    if view is None:
        empty = gr.update(value=None, visible=True)
        gone = gr.update(value=None, visible=False)
        return empty, empty, gone, gone
    images, players = [], []
    for image, video in ((view.left, view.left_video), (view.right, view.right_video)):
        images.append(gr.update(value=None if video else image, visible=video is None))
        players.append(gr.update(value=None if video is None else str(video), visible=video is not None))
    return (*images, *players)


@dataclass
class PairScreen:
    """The tab's components (`layout`): what `screen` fills in for a pair, the answers sent back and the buttons."""

    names: tuple[str, ...]
    """The criteria, in the order of `radios` and `bad`."""
    state: gr.State
    on_screen: gr.Textbox
    """The token of the pair the browser shows, sent back with every answer (see the module docstring)."""
    who: gr.Markdown
    progress: gr.Markdown
    prompt: gr.Markdown
    refs: gr.Image
    left: gr.Image
    right: gr.Image
    left_video: gr.Video
    right_video: gr.Video
    radios: list[gr.Radio]
    bad: list[gr.Checkbox]
    note: gr.Textbox
    message: gr.Markdown
    back: gr.Button
    skip: gr.Button
    flag: gr.Button
    submit: gr.Button

    @property
    def shown(self) -> list:
        """Every output of the tab's events."""
        return [
            self.state,
            self.on_screen,
            self.who,
            self.prompt,
            self.refs,
            self.left,
            self.right,
            self.left_video,
            self.right_video,
            *self.radios,
            *self.bad,
            self.note,
            self.progress,
            self.message,
        ]

    @property
    def answers_in(self) -> list:
        """The inputs of Submit and Skip (Flag adds the note): the session, the token on screen, each criterion's
        winner, then each one's "both bad"."""
        return [self.state, self.on_screen, *self.radios, *self.bad]


def build(wb: Workbench, page: gr.Tab) -> PairTab:
    """Lay out the tab inside `page`; a pair is asked for when the rater opens the tab (`page.select`), so a
    rater who never opens it is never assigned pairs."""
    names = criteria()
    if names != ("cp", "pf"):  # the answer handlers below take one winner and one flag per criterion, by name
        raise RuntimeError(f"the Rate pairs tab knows the criteria cp and pf, not {names}")
    ui = layout(names)
    open_fn, back_fn = on_open(wb, ui), on_back(wb, ui)
    submit_fn, skip_fn, flag_fn = on_answer(wb, ui, "submit"), on_answer(wb, ui, "skip"), on_answer(wb, ui, "flag")
    one_at_a_time = dict(concurrency_id="rating", concurrency_limit=RATING_CONCURRENCY)
    for event in (
        page.select(open_fn, [ui.state], ui.shown, api_name="rate_pair_open", **one_at_a_time),
        ui.submit.click(submit_fn, ui.answers_in, ui.shown, api_name="rate_pair_submit", **one_at_a_time),
        ui.skip.click(skip_fn, ui.answers_in, ui.shown, api_name="rate_pair_skip", **one_at_a_time),
        ui.flag.click(flag_fn, [*ui.answers_in, ui.note], ui.shown, api_name="rate_pair_flag", **one_at_a_time),
        ui.back.click(back_fn, [ui.state], ui.shown, api_name="rate_pair_back", **one_at_a_time),
    ):
        event.then(None, js=SETTLE_JS)
    return PairTab([open_fn, submit_fn, skip_fn, flag_fn, back_fn])


def layout(names: tuple[str, ...]) -> PairScreen:
    """The tab's components: who and progress, the prompt, the reference and the two outputs (images, or players
    for videos), one question per criterion of `names` with its "both bad" box, the buttons and the message."""
    with gr.Column(elem_id="pair-panel"):
        with gr.Row(equal_height=True):
            who = gr.Markdown(elem_id="pair-who", elem_classes=["pair-line"], min_width=200)
            progress = gr.Markdown(elem_id="pair-progress", elem_classes=["pair-line"], min_width=260)
        prompt = gr.Markdown(elem_id="pair-prompt", latex_delimiters=[])
        with gr.Row(equal_height=True):
            refs = gr.Image(
                label="Reference(s)",
                height=IMAGE_HEIGHT,
                interactive=False,
                format="png",
                elem_id="pair-refs",
                buttons=["fullscreen"],
                min_width=200,
            )
            with gr.Column(min_width=200):
                left = gr.Image(
                    label="Left output (←)",
                    height=IMAGE_HEIGHT,
                    interactive=False,
                    format="png",
                    elem_id="pair-left",
                    buttons=["fullscreen"],
                )
                left_video = _player("Left output (←), video", "pair-left-video")
            with gr.Column(min_width=200):
                right = gr.Image(
                    label="Right output (→)",
                    height=IMAGE_HEIGHT,
                    interactive=False,
                    format="png",
                    elem_id="pair-right",
                    buttons=["fullscreen"],
                )
                right_video = _player("Right output (→), video", "pair-right-video")
        radios, bad = [], []
        with gr.Row(equal_height=True):
            for name in names:
                with gr.Column(elem_id=f"pair-box-{name}", min_width=300):
                    radios.append(gr.Radio(WINNER_CHOICES, label=QUESTIONS[name], elem_id=f"pair-{name}"))
                    bad.append(gr.Checkbox(label="Both bad (X)", elem_id=f"pair-bad-{name}", container=False))
        with gr.Row(equal_height=True):
            back = gr.Button("Back (B)", elem_id="pair-back", min_width=90)
            skip = gr.Button("Skip (S)", elem_id="pair-skip", min_width=90)
            note = gr.Textbox(
                placeholder="what is wrong with this pair (needed to Flag)",
                show_label=False,
                container=False,
                elem_id="pair-note",
                scale=2,
                min_width=150,
            )
            flag = gr.Button("Flag (F)", elem_id="pair-flag", min_width=90)
            submit = gr.Button("Submit (Enter)", variant="primary", elem_id="pair-submit", min_width=130)
        message = gr.Markdown(elem_id="pair-message")
        gr.Markdown(SHORTCUTS, elem_id="pair-shortcuts")
        gr.HTML(f"<style>{CSS}</style>", js_on_load=KEYS_JS % {"criteria": list(names)}, elem_id="pair-keys")
    return PairScreen(
        names=names,
        state=gr.State(PairState()),
        on_screen=gr.Textbox(visible=False, elem_id="pair-on-screen"),
        who=who,
        progress=progress,
        prompt=prompt,
        refs=refs,
        left=left,
        right=right,
        left_video=left_video,
        right_video=right_video,
        radios=radios,
        bad=bad,
        note=note,
        message=message,
        back=back,
        skip=skip,
        flag=flag,
        submit=submit,
    )


def keep(ui: PairScreen, session: PairState, msg: str | dict) -> dict:
    """Everything on screen stays as it is (the chosen answers too); only the message changes."""
    return {ui.state: session, ui.message: msg}


def screen(
    ui: PairScreen,
    session: PairState,
    token: str,
    who_md: str,
    prompt_md: str,
    view: PairTaskView | None,
    progress_md: str,
    msg: str,
) -> dict:
    """Every output of the tab for `view` (None: no pair: empty images, no players, no answers)."""
    media = dict(zip((ui.left, ui.right, ui.left_video, ui.right_video), output_media(view), strict=True))
    answers = None if view is None else view.answers
    return {
        ui.state: session,
        ui.on_screen: token,
        ui.who: who_md,
        ui.prompt: prompt_md,
        ui.refs: None if view is None else view.refs_picture,
        **media,
        **{r: None if answers is None else answers.winners[c] for r, c in zip(ui.radios, ui.names, strict=True)},
        **{b: False if answers is None else answers.both_bad[c] for b, c in zip(ui.bad, ui.names, strict=True)},
        ui.note: "",
        ui.progress: progress_md,
        ui.message: msg,
    }


def render(
    wb: Workbench,
    ui: PairScreen,
    user: str | None,
    view: PairTaskView | None,
    msg: str = "",
    session: PairState | None = None,
    prog: PairProgress | None = None,
) -> dict:
    """The screen of `view` for `user` (None: not logged in), with `msg` under the buttons; `session` remembers the
    pair shown (a new one when None), `prog` is the user's progress (asked for when None)."""
    session = session if session is not None else PairState()
    session.show(view if user is not None else None)
    if user is None:
        return screen(ui, session, "", "", LOG_IN, None, "", msg)
    who_md = f"Judging pairs as **{literal(user)}**"
    try:
        prog_md = (prog or wb.pairwise.progress(user)).text()
    except WorkbenchError as exc:
        prog_md = f"⚠ progress unavailable: {exc}"
    if view is None:
        return screen(ui, session, "", who_md, "**No pair left for you.** Thank you!", None, prog_md, msg)
    answers = view.answers
    earlier = [answers.statuses[c] for c in ui.names if answers.statuses[c] not in (None, "rated")]
    if earlier:
        who_md += f" (your earlier answer: {earlier[0]})"
    prompt_md = f"**Pair {view.position}** · Prompt: {literal(view.prompt)}"
    if view.has_video:
        prompt_md += "\n\n*Videos: both play in a loop (press play if one does not start); judge the whole clips.*"
    if view.problem:
        msg = f"{msg}; {warn(view.problem)}" if msg else warn(view.problem)
    return screen(ui, session, view.token, who_md, prompt_md, view, prog_md, msg)


def show_next(wb: Workbench, ui: PairScreen, user: str, session: PairState, msg: str) -> dict:
    """The user's next pair, with `msg` (and why, when the next pair cannot be had)."""
    try:
        view = wb.pairwise.next_task(user)
        return render(wb, ui, user, view, msg, session, wb.pairwise.progress(user))
    except WorkbenchError as exc:
        return render(wb, ui, user, None, f"{msg}; ⚠ next pair: {exc}" if msg else f"⚠ {exc}", session)


def on_open(wb: Workbench, ui: PairScreen) -> Callable[..., dict]:
    """The handler of opening the tab: the next pair; when it is the pair on screen (the rater comes back to the
    tab), the screen stays as it is, with the answers chosen and not yet submitted."""

    def handler(session: PairState, request: gr.Request) -> dict:
        user = user_of(request)
        if user is None:
            return render(wb, ui, None, None)
        with wb.ratings.one_at_a_time(user):
            if session.token:
                try:
                    view = wb.pairwise.next_task(user)
                except WorkbenchError as exc:
                    return keep(ui, session, f"⚠ next pair: {exc}")
                if view is not None and view.token == session.token:
                    return keep(ui, session, gr.update())
                return render(wb, ui, user, view, "", session, wb.pairwise.progress(user))
            return show_next(wb, ui, user, session, "")

    handler.__name__ = "on_open"
    return handler


def on_answer(wb: Workbench, ui: PairScreen, action: str) -> Callable[..., dict]:
    """The handler of `action` (`submit`, `skip`, `flag`) on the pair on screen: stored, then the next pair; refused
    (nothing stored) when the token sent is not the pair on screen, the answer is half or the use case refuses it."""

    def handler(
        session: PairState,
        token: str,
        cp: str | None,
        pf: str | None,
        cp_bad: bool,
        pf_bad: bool,
        request: gr.Request,
        note: str = "",
    ) -> dict:
        user = user_of(request)
        if user is None:
            return render(wb, ui, None, None, "⚠ log in to rate pairs")
        with wb.ratings.one_at_a_time(user):
            if not session.token:
                return keep(ui, session, "⚠ there is no pair on screen")
            if not token or token != session.token:
                return keep(
                    ui,
                    session,
                    "⚠ nothing saved: the pair changed while you answered; check the pair shown now and answer it",
                )
            winners, flags = {"cp": cp, "pf": pf}, {"cp": cp_bad, "pf": pf_bad}
            try:
                done = store_answer(wb, ui.names, action, user, session, winners, flags, note)
            except AnsweredElsewhere as exc:
                # Another tab of this rater answered the pair: ask before replacing (again), or keep (Skip).
                session.answered_as = exc.now
                return keep(ui, session, f"⚠ not saved: {exc}")
            except WorkbenchError as exc:
                return keep(ui, session, f"⚠ not saved: {exc}")
            return show_next(wb, ui, user, session, done)

    handler.__name__ = f"pair_{action}"
    return handler


def store_answer(
    wb: Workbench,
    names: tuple[str, ...],
    action: str,
    user: str,
    session: PairState,
    winners: dict[str, str | None],
    flags: dict[str, bool],
    note: str,
) -> str:
    """Store `action` for the task on screen; the message that says so (a skip names the answers it kept).
    Raises WorkbenchError (nothing stored) for a half answer, a flag without a note, or a refused write."""
    seconds = session.seconds_spent()
    if action == "skip":
        after = wb.pairwise.skip(user, session.token, seconds_spent=seconds)
        kept = [c for c in names if after.statuses[c] not in (None, "skipped")]
        if not kept:
            return "skipped the pair"
        shown = ", ".join(f"{c.upper()} {after.winners[c] or after.statuses[c]}" for c in kept)
        skipped = " and ".join(c.upper() for c in names if c not in kept)
        return (
            f"skipped {skipped}; " if skipped else ""
        ) + f"kept your answer ({shown}): a skip never erases an answer"
    if action == "flag":
        wb.pairwise.flag(user, session.token, note=note, seconds_spent=seconds, shown_as=session.answered_as)
        return "flagged the pair (with your note)"
    missing = [CRITERION_NAMES[c] for c in names if not winners[c]]
    if missing:
        raise InputError(
            "choose left, right or tie for " + " and ".join(missing) + " before submitting (or skip / flag the pair)"
        )
    wb.pairwise.submit(
        user,
        session.token,
        winners,
        both_bad={c: bool(flags[c]) for c in names},
        seconds_spent=seconds,
        shown_as=session.answered_as,
    )
    return "saved your answers"


def on_back(wb: Workbench, ui: PairScreen) -> Callable[..., dict]:
    """The handler of Back: the user's previous pair with its answers, to change and submit again."""

    def handler(session: PairState, request: gr.Request) -> dict:
        user = user_of(request)
        if user is None:
            return render(wb, ui, None, None, "⚠ log in to rate pairs")
        with wb.ratings.one_at_a_time(user):
            try:
                view = wb.pairwise.previous_task(user, session.token or None)
            except WorkbenchError as exc:
                return keep(ui, session, f"⚠ {exc}")
            if view is None:
                return keep(ui, session, "this is your first pair: there is nothing before it")
            return render(wb, ui, user, view, "back to your previous pair: change the answers and submit", session)

    handler.__name__ = "on_back"
    return handler
