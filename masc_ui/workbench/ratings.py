"""Rating use cases: the next task of a rater (blind: images and prompt only), going back, progress, and
committing a rater's answers (both criteria in one transaction).

Tasks come only from the datasets marked for rating (`storage` `for_rating_only`: imports mark theirs, the
Score tab's scratch saves are not marked unless an admin marks their dataset). A skip never erases an answer: a
rater who goes back to a task they answered and presses Skip moves on with the answer kept. A flag needs a
reason (stored as the ratings' note); it replaces an earlier answer, which stays in the rating history.

A write that finds the database busy is retried inside the storage layer (`storage.transactions`, up to its
`max_wait_s`); any other failure is reported as `StoreError` with nothing stored, so the UI keeps the task and
the chosen scores on screen for another try.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from PIL import Image

from ..errors import InputError
from ..imaging import open_image
from ..settings import Settings
from .database import Database

SCORES = (0, 1, 2, 3, 4)
ANCHORS = {
    "cp": ("Concept preservation: is this the same subject as in the reference?", (
        "0 — a different subject: nothing of the reference's identity is left",
        "1 — same kind of thing, but most identifying details (shape, colour, texture) are wrong",
        "2 — recognisably related, with several clear differences in shape, colour or details",
        "3 — the same subject with small differences in a detail or two",
        "4 — the same subject: shape, colour, texture and details all match"),),
    "pf": ("Prompt following: apart from the subject, does the image show what the prompt asks?", (
        "0 — ignores the prompt: none of the asked scene, action or style is there",
        "1 — a small part of the prompt is shown, most of it is missing or wrong",
        "2 — about half of the prompt is shown",
        "3 — most of the prompt is shown, one element is missing or off",
        "4 — everything the prompt asks for is shown"),),
}
"""criterion -> (question, anchor text of levels 0..4); one entry per `criteria()`."""
CRITERION_NAMES = {"cp": "concept preservation", "pf": "prompt following"}
MAX_REASON_CHARS = 1000
"""Longest flag reason accepted."""


def criteria() -> tuple[str, ...]:
    """The criteria a rater scores in a task: storage's `CRITERIA` (`cp`, `pf`)."""
    from storage import CRITERIA

    return tuple(CRITERIA)


@dataclass(frozen=True)
class TaskView:
    """What a rater sees: blind (no metric values, no method), images decoded, their previous answers."""

    sample_id: int
    refs: list[Image.Image]
    out: Image.Image
    prompt: str
    presentation_order: int
    scores: dict[str, int | None]
    """criterion -> this rater's current score (None = not rated, or skipped/flagged)."""
    status: str | None
    """This rater's current status on the sample (`rated`, `skipped`, `flagged`) or None when new."""
    reason: str | None = None
    """The reason this rater gave when they flagged the sample."""


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
    """False when nothing was written (a skip of a task the rater had answered keeps the answer)."""
    message: str


class RatingTasks:
    """Rating tasks over one `Database`; the acting user is the rater."""

    def __init__(self, database: Database, settings: Settings) -> None:
        self._database = database
        self._settings = settings

    def next_task(self, user: str, *, dataset: str | None = None) -> TaskView | None:
        """The next sample `user` should rate (None when nothing is left); creates the rater on first use."""
        def work(store: Any) -> Any:
            store.ratings.ensure_rater(user)
            return store.tasks.next_task(user, dataset, overlap_k=self._settings.rating_overlap, for_rating_only=True)
        task = self._database.run(work)
        return None if task is None else self._view(task.sample, task.presentation_order, dict(task.ratings))

    def previous_task(self, user: str, before_sample_id: int | None, *,
                      dataset: str | None = None) -> TaskView | None:
        task = self._database.run(lambda store: store.tasks.previous_task(user, before_sample_id=before_sample_id,
                                                                          dataset=dataset, for_rating_only=True))
        return None if task is None else self._view(task.sample, task.presentation_order, dict(task.ratings))

    def task_for(self, user: str, sample_id: int) -> TaskView:
        """The task view of `sample_id` with `user`'s current answers (for going back and forth)."""
        sample = self._database.run(lambda store: store.samples.get(sample_id))
        ratings = {r.criterion: r for r in self._database.run(
            lambda store: store.ratings.current(rater=user, sample_id=sample_id))}
        order = next((r.presentation_order for r in ratings.values() if r.presentation_order), 0)
        return self._view(sample, order, ratings)

    def progress(self, user: str, *, dataset: str | None = None) -> RaterProgress:
        def work(store: Any) -> tuple[Any, dict[int, str]]:
            return (store.tasks.progress(user, dataset, overlap_k=self._settings.rating_overlap, for_rating_only=True),
                    store.tasks.statuses(user, dataset, for_rating_only=True))
        p, statuses = self._database.run(work)
        found = list(statuses.values())
        return RaterProgress(found.count("rated"), p.assigned, p.total, found.count("skipped"), found.count("flagged"))

    def submit(self, user: str, sample_id: int, scores: dict[str, int | None], *, status: str = "rated",
               seconds_spent: float | None = None, presentation_order: int | None = None,
               reason: str | None = None) -> Submitted:
        """Commit `user`'s answers for a sample (every criterion in one transaction). `status` `rated` needs a
        score 0..4 for each criterion; `skipped` / `flagged` store no scores; `flagged` needs `reason` (what is
        wrong with the task), stored as the ratings' note. A skip of a sample the rater has rated stores nothing
        and keeps the answer. Raises StoreError (nothing stored) when the database refuses or fails the write."""
        if status not in ("rated", "skipped", "flagged"):
            raise InputError(f"status must be rated, skipped or flagged, got {status!r}")
        note = None
        if status == "rated":
            missing = [c for c in criteria() if scores.get(c) is None]
            if missing:
                raise InputError("choose a score (0-4) for " + " and ".join(CRITERION_NAMES[c] for c in missing)
                                 + " before submitting (or skip / flag the task)")
            payload = {c: int(scores[c]) for c in criteria()}  # type: ignore[arg-type]
        else:
            payload = {c: None for c in criteria()}
        if status == "flagged":
            note = " ".join((reason or "").split())
            if not note:
                raise InputError("say what is wrong with this task (e.g. 'the output image is blank') in the reason "
                                 "box, then flag it again")
            if len(note) > MAX_REASON_CHARS:
                raise InputError(f"the reason is {len(note)} characters long; keep it under {MAX_REASON_CHARS}")
        if status == "skipped":
            earlier = self._current(user, sample_id)
            if earlier and all(r.status == "rated" for r in earlier.values()):
                shown = ", ".join(f"{c.upper()} {earlier[c].score}" for c in criteria() if c in earlier)
                return Submitted(sample_id, "rated", False,
                                 f"kept your answer to sample #{sample_id} ({shown}): a skip never erases an answer")
        self._database.run(lambda store: store.ratings.rate_sample(
            user, sample_id, payload, status=status, seconds_spent=seconds_spent,
            presentation_order=presentation_order or None, note=note))
        return Submitted(sample_id, status, True, f"saved sample #{sample_id} ({status})")

    def _current(self, user: str, sample_id: int) -> dict[str, Any]:
        """criterion -> `user`'s current rating of the sample (task criteria only)."""
        def work(store: Any) -> list[Any]:
            store.ratings.ensure_rater(user)
            return store.ratings.current(rater=user, sample_id=sample_id)
        return {r.criterion: r for r in self._database.run(work) if r.criterion in criteria()}

    def ratings_of(self, user: str) -> list[Any]:
        """`user`'s current ratings (storage records)."""
        return self._database.run(lambda store: store.ratings.current(rater=user))

    def _view(self, sample: Any, order: int, ratings: dict[str, Any]) -> TaskView:
        refs = [self._pixels(sha, f"reference {i + 1} of sample #{sample.id}")
                for i, sha in enumerate(sample.references)]
        out = self._pixels(sample.output, f"output of sample #{sample.id}")
        scores = {c: (ratings[c].score if c in ratings else None) for c in criteria()}
        status = next((r.status for r in ratings.values()), None)
        reason = next((r.note for r in ratings.values() if r.status == "flagged" and r.note), None)
        return TaskView(sample.id, refs, out, sample.prompt, order, scores, status, reason)

    def _pixels(self, sha: str, name: str) -> Image.Image:
        data = self._database.run(lambda store: store.images.read(sha))
        return open_image(data, name=name, max_pixels=self._settings.max_image_pixels).pixels


def criterion_choices(criterion: str) -> Sequence[tuple[str, int]]:
    """Radio choices (label, score) of a criterion, the anchor text as label."""
    return [(text, i) for i, text in enumerate(ANCHORS[criterion][1])]

