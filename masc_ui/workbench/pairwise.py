"""Pairwise rating use cases: the rater's next pair of outputs (blind), going back, answering per criterion
(left / right / tie, plus a "both bad" flag), skipping, flagging, progress.

Pairs (`masc_ui.analysis.plan_pairs`): within a dataset, two outputs with the same reference images and the same
prompt, of different methods. Scope: samples with an output image, a method and a prompt (ratings-only samples
have nothing to show), of the datasets marked for rating (the Rate tab's rule, `storage` `for_rating_only`: imports
mark theirs, the Score tab's scratch saves are not marked); a dataset named explicitly is used as it is.

Assignment rule (`masc_ui.analysis.next_pair`, with `prefer_uncertain=False`): a rater is handed their earliest
unfinished pair first (one without an answer for every criterion). Otherwise they get a pair they were never given
that fewer than K raters hold (K = `Settings.rating_overlap`), chosen from the method pair with the fewest
assignments so far (every method pair is covered evenly), then among pairs other raters already started (so the
K raters of a pair complete it early), then in a fixed random order (seed `PAIR_SEED`). Left/right is a seeded
coin per (rater, pair), recorded with the task. The rule runs inside the storage transaction that records its
choice, so two raters asking at once never both take a pair's last slot. Vote-margin first (`prefer_uncertain=True`)
is not used: with K >= 2 it would start new pairs before finishing started ones.

With `Settings.assignment_policy` `active`, a new pair comes instead from the method pair whose Bradley-Terry
outcome is most uncertain (`masc_ui.analysis.outcome_uncertainty`), a pair given to the fewest raters first, and is
shown with the side that was shown on the left less often on the left (both orders balanced over a pair's raters;
the coin decides a tie). The same K, the same "never the same pair twice to one rater".

What holds a slot of a pair's K: a task with a `rated` answer (any criterion), or an unanswered task of a rater
(not of an admin: an admin who only looks at the tab takes no rater's place) handed out less than
`ASSIGNMENT_EXPIRY` ago. A task nobody answered within that time *expires*: it stops holding the slot
and another rater may be given the pair; it stays its rater's unfinished task (handed back to them first, and
their answer counts like any other). Tasks answered only with skip / flag hold no slot either (the pair still
needs K judgments). A rater is never given the same pair twice, whatever became of their task.

Gold pairs (`pair_gold`: an admin's accepted answer, or a pair attention check) are left out of the plan (`plan_of`):
never handed out as a normal pair, never holding a slot. Storage mixes them into each rater's queue at
`Settings.gold_rate` (`storage.repo.pairwise`), recorded and shown like any other task; their judgments are left out
of the active policy's uncertainty, as of every statistic of methods.

Videos: outputs are paired with outputs of the same kind only (`output_kind`: a video with a video, an image with an
image): a still image next to a moving clip says which method made which, and "prompt following" of a video prompt
cannot be judged on a still. A pair of videos is judged like a pair of images, the two clips played side by side. A
pair of mixed kinds (judgments imported, or tasks handed out before this rule) is still shown, each side as what it
is.

Blind: a view holds the files of the reference and the two outputs, the prompt, the answers so far, and an opaque
random token for the task — no sample id, method, metric value or other rater's answer. The files follow the Rate
tab's rule (`blind_files.BlindFiles`): both sides PNGs of their decoded pixels with no metadata, a video output a
clip to play (`PairTaskView.left_video` / `right_video`) rewritten without its tags, with its poster frame, every
file named by a keyed hash (the name matches no file a rater may hold, and says nothing of the sample). A video
that cannot be sent without its metadata makes the pair unshowable (the rater flags or skips it). Every call takes
the acting user (the rater); a token of another rater is refused.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis.pair_planner import PairCandidate, PairPlan, next_pair, outcome_uncertainty, plan_pairs
from ..analysis.pairwise_data import PairJudgment
from ..caching import LruCache
from ..errors import InputError, WorkbenchError
from ..imaging import VideoLimits
from ..settings import Settings
from .blind_files import BlindFiles
from .database import Database
from .ratings import (
    CRITERION_NAMES,
    AnsweredElsewhere,
    answer_version,
    answered_elsewhere,
    criteria,
    flag_note,
    is_video_sample,
    unshowable_picture,
)

if TYPE_CHECKING:
    from storage import PairAnswer

log = logging.getLogger(__name__)

PAIR_SEED = 0
"""Seed of the pairs' fixed random order and of the left/right coins."""
ASSIGNMENT_EXPIRY = dt.timedelta(minutes=30)
"""An unanswered task older than this no longer holds a slot of its pair (see the module docstring)."""
PREFER_UNCERTAIN = False
"""Whether assignment puts pairs with the closest votes first within a method pair (not used; see above)."""
PLAN_CACHE_SIZE = 8
"""Pair plans a `PairwiseTasks` keeps (each scope a rater works in: a dataset, or every dataset)."""
WINNERS = ("left", "right", "tie")
QUESTIONS = {
    "cp": "Concept preservation: which output shows the subject of the reference more faithfully?",
    "pf": "Prompt following: apart from the subject, which output shows what the prompt asks better?",
}
"""criterion -> the question a rater answers with left / right / tie."""


@dataclass(frozen=True)
class PairAnswers:
    """A rater's current answers to one task."""

    winners: dict[str, str | None]
    """criterion -> `left` / `right` / `tie`, or None (not answered, or skipped / flagged)."""
    both_bad: dict[str, bool]
    statuses: dict[str, str | None]
    """criterion -> `rated` / `skipped` / `flagged`, or None when not answered."""

    @property
    def complete(self) -> bool:
        """Every criterion has an answer (any status): the next task may come."""
        return all(s is not None for s in self.statuses.values())


@dataclass(frozen=True)
class PairTaskView:
    """What a rater sees of a pairwise task: blind (see the module docstring)."""

    token: str
    """Opaque handle of the task: pass it back with the answers."""
    refs: list[Path]
    """Each reference's file (see the module docstring)."""
    left: Path
    """The left output image's file; for a video output, its poster (first) frame's."""
    right: Path
    prompt: str
    position: int
    """1, 2, ... in the order the rater was given their pairs."""
    answers: PairAnswers
    left_video: Path | None = None
    """The left output's video file to play (see the module docstring), None for an image output."""
    right_video: Path | None = None
    left_media_type: str | None = None
    """Media type of `left_video` (e.g. `video/webm`)."""
    right_media_type: str | None = None
    problem: str | None = None
    """Why a stored file of this pair cannot be shown (missing or undecodable), in words for the rater, who can then
    flag or skip the pair; every picture of the pair then says so. None when everything shows."""
    answered_as: tuple[object, ...] = ()
    """The stored answers this view shows (`ratings.answer_version`): pass it back to `submit` / `flag` as
    `shown_as`."""
    refs_picture: Path | None = None
    """What the reference box shows: the one reference's file, or all of them side by side in one PNG (whole, at
    the outputs' size: concept preservation is judged against it)."""

    @property
    def has_video(self) -> bool:
        """At least one side is a video (the rater plays them)."""
        return self.left_video is not None or self.right_video is not None


@dataclass(frozen=True)
class PairProgress:
    judged: int
    """Tasks the rater finished (every criterion answered, any status)."""
    assigned: int
    """judged + the rater's unfinished tasks + pairs still open to them (never theirs, fewer than K holders)."""
    total: int
    """Pairs in scope."""

    def text(self) -> str:
        return f"judged {self.judged} / assigned {self.assigned} / total {self.total} pairs"


class PairwiseTasks:
    """Pairwise rating tasks over one `Database`; the acting user is the rater."""

    def __init__(self, database: Database, settings: Settings, file_folder: Path | None = None) -> None:
        self._database = database
        self._settings = settings
        self._plans: LruCache[PairPlan] = LruCache(PLAN_CACHE_SIZE)
        """Pair plans by their candidates (one per scope in use: a dataset, or all)."""
        self._files = BlindFiles(
            self._read,
            file_folder,
            max_pixels=settings.max_image_pixels,
            video_limits=VideoLimits.from_settings(settings),
        )
        """The files handed to the browser (a temporary folder when None)."""

    @property
    def file_folder(self) -> Path:
        """Where the files of the pairs handed out are written (the web app serves this folder to logged-in users:
        `launch.serve`)."""
        return self._files.folder

    def _rater(self, user: str | None) -> str:
        """`user` when it may judge pairs: a login (any role) when the process has logins, else any name."""
        if self._database.accounts.logins_enabled:
            return self._database.accounts.require_login(user, "pairwise rating")
        if user is None or not str(user).strip():
            raise InputError("pairwise rating needs a logged-in rater: set MASC_USERS (or MASC_USERS_FILE) and log in")
        return str(user)

    def _admins(self) -> frozenset[str]:
        """The admin logins (none without logins): their unanswered tasks hold no slot (`holders`)."""
        return frozenset(self._database.accounts.names("admin"))

    def next_task(self, user: str | None, *, dataset: str | None = None) -> PairTaskView | None:
        """The pair `user` should judge next (None when nothing is left); creates the rater on first use."""
        rater = self._rater(user)
        if dataset is not None:
            self._database.require_dataset(dataset)
        rule = assignment_rule(
            rater,
            self._settings.rating_overlap,
            plans=self._plans,
            admins=self._admins(),
            active=self._settings.assignment_policy == "active",
        )

        def work(store: Any) -> Any:
            store.ratings.ensure_rater(rater)
            return store.pairwise.next_task(
                rater, rule, dataset=dataset, for_rating_only=True, gold_rate=self._settings.gold_rate, seed=PAIR_SEED
            )

        task = self._database.run(work)
        return None if task is None else self._view(task)

    def previous_task(
        self, user: str | None, before_token: str | None, *, dataset: str | None = None
    ) -> PairTaskView | None:
        """The task `user` was given before the one with `before_token` (their latest when None); None at the
        beginning. Its answers are shown and can be changed."""
        rater = self._rater(user)
        task = self._database.pairwise.previous_task(
            rater, before_token=before_token or None, dataset=dataset, for_rating_only=True
        )
        return None if task is None else self._view(task)

    def task_for(self, user: str | None, token: str) -> PairTaskView:
        """`user`'s task `token` with their current answers (going back and forth)."""
        rater = self._rater(user)
        return self._view(self._database.pairwise.task(rater, _token(token)))

    def submit(
        self,
        user: str | None,
        token: str,
        winners: Mapping[str, str],
        *,
        both_bad: Mapping[str, bool] | None = None,
        seconds_spent: float | None = None,
        shown_as: tuple[object, ...] | None = None,
    ) -> PairAnswers:
        """Commit `user`'s answer(s) to task `token`: one criterion (a key press) or several, in one transaction,
        committed before this returns. `winners`: criterion -> `left` / `right` / `tie`; `both_bad`: criterion ->
        flag (default False). Returns the task's answers now; when `.complete`, ask for the next task. Raises
        InputError for a bad answer, StoreError (nothing stored) when the database refuses or fails, and
        `ratings.AnsweredElsewhere` (nothing stored) when the stored answers changed after the screen showed
        `shown_as` (`PairTaskView.answered_as`: the rater answered in another tab); None skips that check."""
        from storage import PairAnswer

        rater = self._rater(user)
        if not winners:
            raise InputError(
                "choose left, right or tie for "
                + " or ".join(CRITERION_NAMES[c] for c in criteria())
                + " before submitting (or skip / flag the pair)"
            )
        flags = dict(both_bad or {})
        for criterion, winner in winners.items():
            if criterion not in criteria():
                raise InputError(
                    f"unknown criterion {criterion!r}; a pair is judged on "
                    + " and ".join(f"{c} ({CRITERION_NAMES[c]})" for c in criteria())
                )
            if winner not in WINNERS:
                raise InputError(
                    f"the answer for {CRITERION_NAMES[criterion]} must be left, right or tie; got {winner!r}"
                )
        unknown = sorted(set(flags) - set(winners))
        if unknown:
            raise InputError(f"'both bad' given for {', '.join(unknown)} without an answer for it")
        answers = [PairAnswer(c, w, both_bad=bool(flags.get(c, False))) for c, w in winners.items()]
        self._check_unchanged(rater, token, shown_as)
        return self._judge(rater, token, answers, seconds_spent)

    def skip(self, user: str | None, token: str, *, seconds_spent: float | None = None) -> PairAnswers:
        """Mark task `token` skipped for every criterion not answered yet (the pair goes to another rater). A skip
        never overwrites an answer: a criterion answered (left / right / tie) or flagged keeps its answer, and a
        task answered on every criterion stores nothing. The returned statuses say what was kept (not `skipped`)."""
        from storage import PairAnswer

        rater = self._rater(user)
        before = _answers(self._database.pairwise.task(rater, _token(token)))
        unanswered = [c for c in criteria() if before.statuses[c] in (None, "skipped")]
        if not unanswered:
            return before
        return self._judge(rater, token, [PairAnswer(c, None, status="skipped") for c in unanswered], seconds_spent)

    def flag(
        self,
        user: str | None,
        token: str,
        *,
        note: str | None = None,
        seconds_spent: float | None = None,
        shown_as: tuple[object, ...] | None = None,
    ) -> PairAnswers:
        """Flag a problem with task `token` (broken image, wrong pair...) for every criterion; `note` says what is
        wrong (required, as for a flag in the Rate tab: InputError without one, nothing stored). The pair goes to
        another rater; an earlier answer stays in the history. `shown_as`: as for `submit`."""
        from storage import PairAnswer

        rater = self._rater(user)
        text = flag_note(
            note,
            "type a reason, then flag: say what is wrong with this pair (e.g. 'the left image is blank') in "
            "the box next to Flag",
            word="note",
        )
        self._check_unchanged(rater, token, shown_as)
        return self._judge(
            rater, token, [PairAnswer(c, None, status="flagged", note=text) for c in criteria()], seconds_spent
        )

    def progress(self, user: str | None, *, dataset: str | None = None) -> PairProgress:
        rater = self._rater(user)
        state = self._database.pairwise.state(rater, dataset=dataset, for_rating_only=True)
        plan = plan_of(state, self._plans)
        mine = [x for x in state.tasks if x.rater == rater]
        judged = sum(x.complete(criteria()) for x in mine)
        rows, raters = plan.assigned(holders(state, rater, self._admins()))
        given = np.bincount(rows, minlength=len(plan.pairs))
        taken = np.zeros(len(plan.pairs), dtype=bool)
        taken[rows[np.array([r == rater for r in raters], dtype=bool)]] = True
        open_to_me = int((~taken & (given < self._settings.rating_overlap)).sum())
        gold = state.gold if self._settings.gold_rate > 0 else frozenset()
        gold_left = len(gold - {(x.sample_a_id, x.sample_b_id) for x in mine})
        return PairProgress(judged, len(mine) + open_to_me + gold_left, len(plan.pairs) + len(gold))

    def _check_unchanged(self, rater: str, token: str, shown_as: tuple[object, ...] | None) -> None:
        """AnsweredElsewhere when `rater`'s stored answers to task `token` are no longer the `shown_as` ones."""
        if shown_as is None:
            return
        judged = self._database.pairwise.task(rater, _token(token)).judgments
        now = answer_version(judged)
        if now != tuple(shown_as):
            statuses = {j.status for j in judged.values()}
            if statuses == {"rated"}:
                shown = ", ".join(f"{c.upper()} {judged[c].winner}" for c in criteria() if c in judged)
            else:
                shown = "flagged" if "flagged" in statuses else "skipped"
            raise AnsweredElsewhere(answered_elsewhere(shown, "pair"), now)

    def _judge(self, rater: str, token: str, answers: list[PairAnswer], seconds_spent: float | None) -> PairAnswers:
        if (
            not isinstance(seconds_spent, (int, float))
            or isinstance(seconds_spent, bool)
            or not math.isfinite(seconds_spent)
            or seconds_spent < 0
        ):
            seconds_spent = None  # a clock glitch on the client must not cost the answer
        self._database.pairwise.judge(rater, _token(token), answers, seconds_spent=seconds_spent)
        return _answers(self._database.pairwise.task(rater, _token(token)))

    def _view(self, task: Any) -> PairTaskView:
        left, right = (
            self._database.samples.get(task.left_sample_id),
            self._database.samples.get(task.right_sample_id),
        )
        try:
            refs = [
                self._files.image(sha, name=f"reference {i + 1} of pair {task.position}")
                for i, sha in enumerate(left.references)
            ]
            refs_picture = self._files.side_by_side(left.references, name=f"reference of pair {task.position}")
            left_image, left_video, left_type = self._output(left, f"left output of pair {task.position}")
            right_image, right_video, right_type = self._output(right, f"right output of pair {task.position}")
        except WorkbenchError as exc:
            # As for absolute tasks (`ratings.unshowable_picture`): a damaged store never holds a rater on a pair.
            log.error("pair of samples #%s and #%s cannot be shown to raters: %s", left.id, right.id, exc)
            picture = self._files.picture("unshowable", unshowable_picture)
            return PairTaskView(
                task.token,
                [picture],
                picture,
                picture,
                left.prompt or "",
                task.position,
                _answers(task),
                problem="this pair's pictures cannot be shown (a stored file is "
                "missing or damaged, or cannot be sent without its metadata): "
                "press Flag with a short note, or Skip",
                answered_as=answer_version(task.judgments),
                refs_picture=picture,
            )
        return PairTaskView(
            task.token,
            refs,
            left_image,
            right_image,
            left.prompt or "",
            task.position,
            _answers(task),
            left_video,
            right_video,
            left_type,
            right_type,
            answered_as=answer_version(task.judgments),
            refs_picture=refs_picture,
        )

    def _output(self, sample: Any, name: str) -> tuple[Path, Path | None, str | None]:
        """(picture, video file, its media type) of a sample's output: the image and no file for an image output;
        the poster (first) frame, the clip to play and its type for a video output (`BlindFiles.video`)."""
        if not is_video_sample(sample):
            return self._files.image(sample.output, name=name), None, None
        media_type = self._database.images.media_type(sample.output)
        video = self._files.video(sample.output, media_type, name=name)
        return video.poster, video.clip, video.media_type

    def _read(self, sha: str) -> bytes:
        return self._database.images.read(sha)


def assignment_rule(
    rater: str,
    overlap: int,
    *,
    prefer_uncertain: bool = PREFER_UNCERTAIN,
    plans: LruCache[PairPlan] | None = None,
    admins: frozenset[str] = frozenset(),
    active: bool = False,
) -> Callable[[Any], Any]:
    """The rule `storage.pairwise.next_task` runs on its snapshot (see the module docstring): a
    `storage.PairChoice` for `rater`, or None when no pair is left for them (`plans`: see `plan_of`; `admins`: see
    `holders`; `active`: the `active` assignment policy)."""

    def choose(state: Any) -> Any:
        from storage import PairChoice

        plan = plan_of(state, plans)
        held = holders(state, rater, admins)
        if active:
            uncertainty = outcome_uncertainty(plan, _judgments(state))
            task = next_pair(plan, rater, held, overlap, uncertainty=uncertainty)
        else:
            judgments = _judgments(state) if prefer_uncertain else ()
            task = next_pair(plan, rater, held, overlap, judgments, prefer_uncertain=prefer_uncertain)
        if task is None:
            return None
        left = balanced_left(state, int(task.pair.a), int(task.pair.b), int(task.left)) if active else int(task.left)
        return PairChoice(int(task.pair.a), int(task.pair.b), left)

    return choose


def balanced_left(state: Any, a: int, b: int, coin: int) -> int:
    """The sample to show on the left for a new task of the pair (a, b): the one shown on the left less often in
    the pair's tasks so far (`state.tasks`), `coin` (the planner's seeded choice) when both were shown as often."""
    shown = [task.left_sample_id for task in state.tasks if {task.sample_a_id, task.sample_b_id} == {a, b}]
    left_a, left_b = shown.count(a), shown.count(b)
    if left_a == left_b:
        return coin
    return a if left_a < left_b else b


def plan_of(state: Any, cache: LruCache[PairPlan] | None = None) -> PairPlan:
    """Every pair of the state's candidates: same dataset, same reference images, same prompt, same kind of output
    (`output_kind`), different methods, less the gold pairs (`state.gold`: handed out by storage's own rule, never
    as normal pairs) (`cache`: plans by their candidates and gold pairs, so a plan is built once while the scope's
    samples stay the same)."""
    candidates = tuple(
        PairCandidate(str(c.sample_id), f"{reference_key(c)}\0{output_kind(c)}", c.prompt, c.method)
        for c in state.candidates
    )
    gold = tuple(sorted((str(a), str(b)) for a, b in getattr(state, "gold", ())))

    def build() -> PairPlan:
        return plan_pairs(candidates, seed=PAIR_SEED).without(gold)

    if cache is None:
        return build()
    return cache.get_or_compute((candidates, gold), build)


def reference_key(sample: Any) -> str:
    """Identity of a sample's reference: its dataset and reference images (their SHA-256, in any order); of a
    `storage.PairCandidateRecord` or a `storage.SampleRecord`."""
    return "\0".join([sample.dataset, *sorted(sample.references)])


def output_kind(candidate: Any) -> str:
    """`image` or `video`: the kind of a `storage.PairCandidateRecord`'s output, by its stored media type (an
    `image/...` type, or none recorded, is an image)."""
    media_type = candidate.output_media_type or ""
    return "image" if not media_type or media_type.startswith("image/") else "video"


def holders(state: Any, rater: str, admins: frozenset[str] = frozenset()) -> list[tuple[str, tuple[str, str]]]:
    """(rater, pair) of the tasks that hold a slot of their pair (see the module docstring), plus every task of
    `rater` (so they are never given a pair twice). An unanswered task of one of `admins` holds no slot: an admin
    who looks at the tab takes no rater's place; their answer, once given, counts as any other."""
    out = []
    for task in state.tasks:
        rated = any(j.status == "rated" for j in task.judgments.values())
        waiting = (
            task.rater not in admins
            and not task.complete(criteria())
            and state.now - task.assigned_at < ASSIGNMENT_EXPIRY
        )
        if task.rater == rater or rated or waiting:
            out.append((task.rater, (str(task.sample_a_id), str(task.sample_b_id))))
    return out


def _judgments(state: Any) -> list[PairJudgment]:
    """The rated judgments of the state, less those of gold pairs (they never count for a method)."""
    gold: frozenset[tuple[int, int]] = getattr(state, "gold", frozenset())
    return [
        PairJudgment(str(j.left_sample_id), str(j.right_sample_id), j.criterion, j.winner, j.rater)
        for j in state.judgments
        if j.status == "rated" and (j.sample_a_id, j.sample_b_id) not in gold
    ]


def _answers(task: Any) -> PairAnswers:
    judged = task.judgments
    return PairAnswers(
        {c: judged[c].winner if c in judged else None for c in criteria()},
        {c: bool(judged[c].both_bad) if c in judged else False for c in criteria()},
        {c: judged[c].status if c in judged else None for c in criteria()},
    )


def _token(token: object) -> str:
    if not isinstance(token, str) or not token.strip():
        raise InputError("there is no pairwise task on screen: ask for the next task")
    return token
