"""Rating use cases: the next task of a rater (blind: images and prompt only), going back, progress, and
committing a rater's answers (both criteria in one transaction).

Which open task comes next follows `Settings.assignment_policy`: `overlap` (storage's rule: started samples first,
then each rater's own shuffled order) or `active` (`widest_interval`: where an answer narrows the leaderboard's
intervals most). Tasks come only from the datasets marked for rating (`storage` `for_rating_only`: imports mark theirs, the
Score tab's scratch saves are not marked unless an admin marks their dataset). A skip never erases an answer or a
flag: a rater who goes back to a task they answered or flagged and presses Skip moves on with the answer (or the
flag and its reason) kept. A flag needs a reason (stored as the ratings' note); it replaces an earlier answer, which
stays in the rating history.

Blind means: what reaches a rater is the images, the prompt, the rater's own answers and progress counts; no
metric, method, sample id or other rater's answer. The images and videos are files made by `blind_files.BlindFiles`
(pixels only, no metadata, names that say nothing of the stored file). A task is named to the browser by an opaque
`token` (new for every view), never by its sample id. Each rater's events run one at a time (`one_at_a_time`),
different raters' in parallel.

A write that finds the database busy is retried inside the storage layer (`storage.transactions`, up to its
`max_wait_s`); any other failure is reported as `StoreError` with nothing stored, so the UI keeps the task and
the chosen scores on screen for another try.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import textwrap
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, WorkbenchError
from ..imaging import VideoLimits
from ..settings import Settings
from .blind_files import BlindFiles
from .database import Database

if TYPE_CHECKING:
    from PIL import Image

    from .studies import Studies, StudyScope

log = logging.getLogger(__name__)

SCORES = (0, 1, 2, 3, 4)
ANCHORS = {
    "cp": (
        "Concept preservation: is this the same subject as in the reference?",
        (
            "0 — a different subject: nothing of the reference's identity is left",
            "1 — same kind of thing, but most identifying details (shape, colour, texture) are wrong",
            "2 — recognisably related, with several clear differences in shape, colour or details",
            "3 — the same subject with small differences in a detail or two",
            "4 — the same subject: shape, colour, texture and details all match",
        ),
    ),
    "pf": (
        "Prompt following: apart from the subject, does the image show what the prompt asks?",
        (
            "0 — ignores the prompt: none of the asked scene, action or style is there",
            "1 — a small part of the prompt is shown, most of it is missing or wrong",
            "2 — about half of the prompt is shown",
            "3 — most of the prompt is shown, one element is missing or off",
            "4 — everything the prompt asks for is shown",
        ),
    ),
}
"""criterion -> (question, anchor text of levels 0..4); one entry per `criteria()`."""
CRITERION_NAMES = {"cp": "concept preservation", "pf": "prompt following"}
SAVED = {"rated": "saved your answer (rated)", "flagged": "saved your answer (flagged)", "skipped": "skipped the task"}
"""What a rater is told once an answer of each status is stored (a skip stores no answer: it says so)."""
MAX_REASON_CHARS = 1000
"""Longest flag reason accepted."""


class AnsweredElsewhere(InputError):
    """The rater's stored answer to a task changed after the task was shown to them (another tab or window of the
    same rater answered it): nothing was stored. `now` is the answer as it is stored now (pass it as `shown_as` to
    replace it deliberately)."""

    def __init__(self, message: str, now: tuple[object, ...]) -> None:
        super().__init__(message)
        self.now = now


def answer_version(records: Any) -> tuple[tuple[str, int], ...]:
    """Which stored answer a screen was built on: (criterion, revision) of each current rating or judgment among
    `records` (a criterion -> record mapping; records with `criterion` and `revision`), sorted; () when none."""
    return tuple(sorted((c, r.revision) for c, r in dict(records).items() if c in criteria()))


def answered_elsewhere(shown: str, what: str) -> str:
    """The message of `AnsweredElsewhere`: `shown` names the stored answer, `what` the task ("task", "pair")."""
    return (
        f"you already answered this {what} in another tab ({shown}): press Submit again to replace that answer "
        f"with the one on screen, or Skip to keep it"
    )


def criteria() -> tuple[str, ...]:
    """The criteria a rater scores in a task: storage's `CRITERIA` (`cp`, `pf`)."""
    from storage import CRITERIA

    return tuple(CRITERIA)


@dataclass(frozen=True)
class TaskView:
    """What a rater sees: blind (no metric values, no method), the images as files, their previous answers."""

    sample_id: int
    """The stored sample (stays on the server: the browser sees `token`)."""
    refs: list[Path]
    """Each reference's file (`blind_files`: a PNG of its pixels, named by a keyed hash)."""
    out: Path
    """The output image's file; for a video output, a PNG of its poster (first) frame."""
    prompt: str
    presentation_order: int
    scores: dict[str, int | None]
    """criterion -> this rater's current score (None = not rated, or skipped/flagged)."""
    status: str | None
    """This rater's current status on the sample (`rated`, `skipped`, `flagged`) or None when new."""
    reason: str | None = None
    """The reason this rater gave when they flagged the sample."""
    out_video: Path | None = None
    """The output video's file for playback, without its metadata (None for an image output); raters rate it as
    they rate an image."""
    out_media_type: str | None = None
    """Media type of `out_video` (e.g. `video/mp4`)."""
    token: str = field(default_factory=lambda: secrets.token_urlsafe(12))
    """Opaque name of this view of the task for the browser (random; says nothing about the sample)."""

    problem: str | None = None
    """Why a stored file of this task cannot be shown (a missing or undecodable blob, a video that cannot be sent
    without its metadata), in words for the rater, who can then Flag or Skip it; the picture in its place says so
    too. None when everything shows."""
    refs_picture: Path | None = None
    """What the references box shows: the one reference's file, or all of them side by side in one PNG."""
    answered_as: tuple[object, ...] = ()
    """The stored answer this view shows (`answer_version`): pass it back to `submit` as `shown_as`."""

    @property
    def is_video(self) -> bool:
        return self.out_video is not None


@dataclass(frozen=True)
class RaterProgress:
    """One rater's progress over the tasks for rating: answered = rated + skipped + flagged."""

    rated: int
    assigned: int
    total: int
    skipped: int = 0
    flagged: int = 0

    @property
    def answered(self) -> int:
        return self.rated + self.skipped + self.flagged

    def text(self) -> str:
        others = [f"{n} {what}" for n, what in ((self.skipped, "skipped"), (self.flagged, "flagged")) if n]
        extra = f" ({', '.join(others)} not rated)" if others else ""
        return f"rated {self.rated}{extra} / assigned {self.assigned} / total {self.total}"


@dataclass(frozen=True)
class Submitted:
    """What an answer did."""

    sample_id: int
    status: str
    """The status now stored for the rater on the sample."""
    stored: bool
    """False when nothing was written (a skip of a task the rater had answered or flagged keeps it)."""
    message: str


class RatingTasks:
    """Rating tasks over one `Database`; the acting user is the rater."""

    def __init__(
        self, database: Database, settings: Settings, image_folder: Path | None = None, studies: Studies | None = None
    ) -> None:
        self._database = database
        self._settings = settings
        self._studies = studies
        """Crowd studies (`studies.Studies`): a study participant rates their study's dataset, up to its quota."""
        self._files = BlindFiles(
            self._read,
            image_folder,
            max_pixels=settings.max_image_pixels,
            video_limits=VideoLimits.from_settings(settings),
        )
        self._rater_locks: dict[str, threading.Lock] = {}
        self._known_raters: set[str] = set()
        self._guard = threading.Lock()

    @property
    def image_folder(self) -> Path:
        """Where the files of the tasks handed out are written (the web app serves this folder to logged-in users:
        `launch.serve`)."""
        return self._files.folder

    @property
    def database_in_process(self) -> bool:
        """Whether the database runs inside this process (SQLite: a query takes microseconds and never waits on a
        network), where the web app runs rating events on its event loop (`rate_tab.on_event_loop`)."""
        return self._database.store.backend == "sqlite"

    @contextmanager
    def one_at_a_time(self, user: str) -> Iterator[None]:
        """Hold `user`'s rating lock: one event of a rater at a time (a Skip pressed right after Submit sees the
        task Submit moved on to), while other raters go on in parallel. One lock per rater (logins are few)."""
        with self._guard:
            lock = self._rater_locks.setdefault(user, threading.Lock())
        with lock:
            yield

    def rater_of(self, user: str | None) -> str:
        """`user` when it may rate (see `_rater`; the guides and practice rounds ask the same); AccessDenied when not."""
        return self._rater(user)

    def _rater(self, user: str | None) -> str:
        """`user` when it may rate: a login (any role), a study participant, or any name when the process has no logins
        (local)."""
        if self._study_of(user) is not None:
            return user  # type: ignore[return-value]
        if user is None or (self._database.accounts.logins_enabled and user not in self._database.accounts.names()):
            raise self._denied()
        return user

    @staticmethod
    def _denied() -> Exception:
        from .users import AccessDenied

        return AccessDenied("rating needs a login: log in with your rater account")

    def next_task(self, user: str, *, dataset: str | None = None) -> TaskView | None:
        """The next sample `user` should rate (None when nothing is left); creates the rater on first use."""
        return self.next_task_and_progress(user, dataset=dataset)[0]

    def next_task_and_progress(self, user: str, *, dataset: str | None = None) -> tuple[TaskView | None, RaterProgress]:
        """`next_task` and `progress` read together (what the Rate tab shows after each answer). A study participant
        gets their study's dataset only, until they have finished its tasks per participant (then None, and they are
        marked finished: `studies.Studies.finish`)."""
        user = self._ensure_rater(self._rater(user))
        scope = self._study_of(user)
        if scope is not None:
            return self._participant_screen(user, scope)

        task, p, statuses = self._database.tasks.rater_screen(
            user,
            dataset,
            overlap_k=self._settings.rating_overlap,
            for_rating_only=True,
            gold_rate=self._settings.gold_rate,
            choose=self._policy(),
        )
        view = None if task is None else self._view(task.sample, task.presentation_order, dict(task.ratings))
        return view, _progress(p, statuses)

    def _policy(self) -> Callable[[Any], int] | None:
        """The rule choosing among a rater's open tasks (`Settings.assignment_policy`): None for storage's overlap
        rule, `widest_interval` for `active`."""
        return widest_interval if self._settings.assignment_policy == "active" else None

    def _study_of(self, user: str | None) -> StudyScope | None:
        return None if self._studies is None else self._studies.scope_of(user)

    def _participant_screen(self, user: str, scope: StudyScope) -> tuple[TaskView | None, RaterProgress]:
        """A participant's next task and progress: the study's dataset and gold rate; None once they finished the
        study's tasks per participant, or nothing is left for them (they are then finished, for good)."""
        assert self._studies is not None
        task, _, statuses = self._database.tasks.rater_screen(
            user,
            scope.dataset,
            overlap_k=self._settings.rating_overlap,
            for_rating_only=True,
            gold_rate=scope.gold_rate,
            choose=self._policy(),
        )
        finished = self._studies.finished(user) is not None
        if finished or len(statuses) >= scope.tasks:
            task = None
        if task is None and not finished:
            self._studies.finish(user)
        view = None if task is None else self._view(task.sample, task.presentation_order, dict(task.ratings))
        return view, _study_progress(statuses, scope.tasks)

    def _ensure_rater(self, user: str) -> str:
        """`user` as a rater in the database (created once; remembered, so later tasks need no write)."""
        if user not in self._known_raters:
            self._database.ratings.ensure_rater(user)
            with self._guard:
                self._known_raters.add(user)
        return user

    def previous_task(self, user: str, before_sample_id: int | None, *, dataset: str | None = None) -> TaskView | None:
        user = self._rater(user)
        scope = self._study_of(user)
        dataset = dataset if scope is None else scope.dataset
        task = self._database.tasks.previous_task(
            user, before_sample_id=before_sample_id, dataset=dataset, for_rating_only=True
        )
        return None if task is None else self._view(task.sample, task.presentation_order, dict(task.ratings))

    def task_for(self, user: str, sample_id: int) -> TaskView:
        """The task view of `sample_id` with `user`'s current answers (for going back and forth)."""
        user = self._rater(user)
        sample = self._database.samples.get(sample_id)
        self._within_study(user, sample)
        ratings = {r.criterion: r for r in self._database.ratings.current(rater=user, sample_id=sample_id)}
        order = next((r.presentation_order for r in ratings.values() if r.presentation_order), 0)
        return self._view(sample, order, ratings)

    def progress(self, user: str, *, dataset: str | None = None) -> RaterProgress:
        user = self._rater(user)
        scope = self._study_of(user)
        if scope is not None:
            statuses = self._database.tasks.statuses(user, scope.dataset, for_rating_only=True)
            return _study_progress(statuses, scope.tasks)

        def work(store: Any) -> tuple[Any, dict[int, str]]:
            return (
                store.tasks.progress(
                    user,
                    dataset,
                    overlap_k=self._settings.rating_overlap,
                    for_rating_only=True,
                    gold_rate=self._settings.gold_rate,
                ),
                store.tasks.statuses(user, dataset, for_rating_only=True),
            )

        return _progress(*self._database.run(work))

    def submit(
        self,
        user: str,
        sample_id: int,
        scores: dict[str, int | None],
        *,
        status: str = "rated",
        seconds_spent: float | None = None,
        presentation_order: int | None = None,
        reason: str | None = None,
        shown_as: tuple[object, ...] | None = None,
    ) -> Submitted:
        """Commit `user`'s answers for a sample (every criterion in one transaction). `status` `rated` needs a
        score 0..4 for each criterion; `skipped` / `flagged` store no scores; `flagged` needs `reason` (what is
        wrong with the task), stored as the ratings' note. A skip of a sample the rater has rated or flagged stores
        nothing and keeps the answer or the flag (with its reason). Raises StoreError (nothing stored) when the
        database refuses or fails the write. The returned message names no sample (raters are blind to ids).
        `shown_as`: the stored answer the rater's screen showed (`TaskView.answered_as`); an answer or a flag given
        on a screen whose stored answer has changed since (the rater answered in another tab) raises
        `AnsweredElsewhere` and stores nothing; None skips the check."""
        user = self._rater(user)
        if status not in ("rated", "skipped", "flagged"):
            raise InputError(f"status must be rated, skipped or flagged, got {status!r}")
        note = None
        payload: dict[str, int | None]
        if status == "rated":
            missing = [c for c in criteria() if scores.get(c) is None]
            if missing:
                raise InputError(
                    "choose a score (0-4) for "
                    + " and ".join(CRITERION_NAMES[c] for c in missing)
                    + " before submitting (or skip / flag the task)"
                )
            payload = {c: int(scores[c]) for c in criteria()}  # type: ignore[arg-type]
        else:
            payload = {c: None for c in criteria()}
        if status == "flagged":
            note = flag_note(
                reason,
                "type a reason, then flag: say what is wrong with this task (e.g. 'the output image is "
                "blank') in the reason box under the buttons",
                word="reason",
            )
        if self._study_of(user) is not None:
            self._within_study(user, self._database.samples.get(sample_id))
        if status != "skipped" and shown_as is not None:
            earlier = self._current(user, sample_id)
            if answer_version(earlier) != tuple(shown_as):
                raise AnsweredElsewhere(answered_elsewhere(_answer_text(earlier), "task"), answer_version(earlier))
        if status == "skipped":
            earlier = self._current(user, sample_id)
            kept = {r.status for r in earlier.values()}
            if earlier and kept == {"rated"}:
                shown = ", ".join(f"{c.upper()} {earlier[c].score}" for c in criteria() if c in earlier)
                return Submitted(
                    sample_id, "rated", False, f"kept your answer ({shown}): a skip never erases an answer"
                )
            if earlier and kept == {"flagged"}:
                why = next((r.note for r in earlier.values() if r.note), None)
                shown = f" (reason: “{why}”)" if why else ""
                return Submitted(
                    sample_id, "flagged", False, f"kept your flag{shown}: a skip never erases an answer or a flag"
                )
        self._database.ratings.rate_sample(
            user,
            sample_id,
            payload,
            status=status,
            seconds_spent=seconds_spent,
            presentation_order=presentation_order or None,
            note=note,
        )
        return Submitted(sample_id, status, True, SAVED[status])

    def _within_study(self, user: str, sample: Any) -> None:
        """AccessDenied when `user` is a study participant and `sample` is not of their study's dataset."""
        scope = self._study_of(user)
        if scope is not None and sample.dataset != scope.dataset:
            raise self._denied_outside_study()

    @staticmethod
    def _denied_outside_study() -> Exception:
        from .users import AccessDenied

        return AccessDenied("this task is not part of your study")

    def _current(self, user: str, sample_id: int) -> dict[str, Any]:
        """criterion -> `user`'s current rating of the sample (task criteria only)."""
        user = self._ensure_rater(user)
        found = self._database.ratings.current(rater=user, sample_id=sample_id)
        return {r.criterion: r for r in found if r.criterion in criteria()}

    def ratings_of(self, user: str) -> list[Any]:
        """`user`'s current ratings (storage records)."""
        user = self._rater(user)
        return self._database.ratings.current(rater=user)

    def blind_view(self, sample_id: int) -> TaskView:
        """The blind view of the stored sample `sample_id` without answers (a guide example, a practice task)."""
        return self._view_of(self._database.samples.get(sample_id), 0, {})

    def _view(self, sample: Any, order: int, ratings: dict[str, Any]) -> TaskView:
        return dataclasses.replace(self._view_of(sample, order, ratings), answered_as=answer_version(ratings))

    def _view_of(self, sample: Any, order: int, ratings: dict[str, Any]) -> TaskView:
        scores = {c: (ratings[c].score if c in ratings else None) for c in criteria()}
        status = next((r.status for r in ratings.values()), None)
        reason = next((r.note for r in ratings.values() if r.status == "flagged" and r.note), None)
        try:
            refs = [self._files.image(sha, name=f"reference {i + 1}") for i, sha in enumerate(sample.references)]
            refs_picture = self._files.side_by_side(sample.references, name="reference")
            if not is_video_sample(sample):
                return TaskView(
                    sample.id,
                    refs,
                    self._files.image(sample.output, name="the output image"),
                    sample.prompt,
                    order,
                    scores,
                    status,
                    reason,
                    refs_picture=refs_picture,
                )
            media_type = self._database.images.media_type(sample.output)
            video = self._files.video(sample.output, media_type, name="the output video of this task")
        except WorkbenchError as exc:
            # A damaged store must not hold a rater on one task they cannot see: the task is shown with a picture
            # that says so, and the rater flags or skips it. The rater's words name no sample (blind tasks).
            log.error("sample #%s cannot be shown to raters: %s", sample.id, exc)
            picture = self._files.picture("unshowable", unshowable_picture)
            return TaskView(
                sample.id,
                [picture],
                picture,
                sample.prompt,
                order,
                scores,
                status,
                reason,
                problem=UNSHOWABLE,
                refs_picture=picture,
            )
        return TaskView(
            sample.id,
            refs,
            video.poster,
            sample.prompt,
            order,
            scores,
            status,
            reason,
            out_video=video.clip,
            out_media_type=video.media_type,
            refs_picture=refs_picture,
        )

    def _read(self, sha: str) -> bytes:
        return self._database.images.read(sha)


UNSHOWABLE = (
    "this task's images cannot be shown (a stored file is missing or damaged, or cannot be sent without "
    "its metadata): press Flag with a short reason, or Skip"
)
"""What a rater is told of a task whose files cannot be shown (`TaskView.problem`)."""


def _answer_text(ratings: dict[str, Any]) -> str:
    """A rater's stored answer in words: "CP 4, PF 3", "flagged", "skipped"."""
    statuses = {r.status for r in ratings.values()}
    if statuses == {"rated"}:
        return ", ".join(f"{c.upper()} {ratings[c].score}" for c in criteria() if c in ratings)
    return "flagged" if "flagged" in statuses else "skipped"


def widest_interval(open_tasks: Any) -> int:
    """The `active` assignment policy's choice among a rater's open tasks (`storage.OpenTasks`): a sample of the
    method whose mean rating is least certain (`masc_ui.analysis.active_assignment.widest_interval_choice`)."""
    from ..analysis.active_assignment import widest_interval_choice

    return widest_interval_choice(open_tasks.waiting, open_tasks.method, open_tasks.complete, open_tasks.means)


def is_video_sample(sample: Any) -> bool:
    """Whether a stored sample (`storage.SampleRecord`) has a video output: its info holds `video` (what Save and
    the video importers record, `records.video_info`)."""
    return isinstance((sample.info or {}).get("video"), dict)


def _progress(p: Any, statuses: dict[int, str]) -> RaterProgress:
    """A rater's progress from the storage counts and their statuses on the finished samples."""
    found = list(statuses.values())
    return RaterProgress(found.count("rated"), p.assigned, p.total, found.count("skipped"), found.count("flagged"))


def _study_progress(statuses: dict[int, str], tasks: int) -> RaterProgress:
    """A study participant's progress: their finished tasks of the study against its tasks per participant."""
    found = list(statuses.values())
    return RaterProgress(found.count("rated"), tasks, tasks, found.count("skipped"), found.count("flagged"))


def criterion_choices(criterion: str) -> Sequence[tuple[str, int]]:
    """Radio choices (label, score) of a criterion, the anchor text as label."""
    return [(text, i) for i, text in enumerate(ANCHORS[criterion][1])]


def flag_note(text: str | None, missing: str, *, word: str) -> str:
    """The note of a flag, whitespace tidied; InputError `missing` when there is none (a flag always says why), and
    one naming the length when it is over `MAX_REASON_CHARS` (`word`: what the form calls it, e.g. "reason")."""
    note = " ".join((text or "").split())
    if not note:
        raise InputError(missing)
    if len(note) > MAX_REASON_CHARS:
        raise InputError(f"the {word} is {len(note)} characters long; keep it under {MAX_REASON_CHARS}")
    return note


def unshowable_picture(width: int = 480, height: int = 270) -> Image.Image:
    """The picture shown in place of a stored file that cannot be shown to a rater."""
    from PIL import Image, ImageDraw, ImageFont

    picture = Image.new("RGB", (width, height), (236, 236, 236))
    draw = ImageDraw.Draw(picture)
    lines = textwrap.wrap(
        "This picture cannot be shown: a stored file is missing or damaged. Press Flag with a short reason, or Skip.",
        width=30,
    )
    draw.multiline_text(
        (28, 40), "\n".join(lines), fill=(120, 30, 30), spacing=12, font=ImageFont.load_default(size=26)
    )
    return picture
