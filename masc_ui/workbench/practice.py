"""Practice rounds: before their first real task of a dataset, a rater answers the dataset's practice tasks (gold
tasks the admin picked, `rating_guide.RatingGuides.set_guide`), each once, in their own order, and is told after
each answer what was expected: "the expected answer was 3-4: the subject's colour changed".

Practice answers are kept apart from ratings (`storage.repo.guides`): they never enter agreement, leaderboards,
rater reports or task counts, and a practice sample is never handed out as a real task. A practice task is shown
as a real one is (blind files, the prompt); its feedback holds only the accepted answer and the gold task's note.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InputError
from .database import Database
from .rating_guide import RatingGuides, practice_left, practice_order
from .ratings import CRITERION_NAMES, RatingTasks, TaskView, criteria


@dataclass(frozen=True)
class PracticeTask:
    """The next practice task of a rater: `view` as a real task's (blind), `number` of `of`."""

    dataset: str
    """Stays on the server (raters are not shown it)."""
    view: TaskView
    number: int
    of: int
    skippable: bool

    @property
    def sample_id(self) -> int:
        return self.view.sample_id


@dataclass(frozen=True)
class PracticeFeedback:
    """What a rater is told after a practice answer: one line per criterion with an accepted answer."""

    lines: list[str]
    correct: int
    """How many of the answers were accepted."""
    left: int
    """Practice tasks still to answer (0: the round is done)."""
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        done = (
            "That was the last practice task: your real tasks start now."
            if self.left == 0
            else f"{self.left} practice task(s) to go."
        )
        return "\n".join([*self.lines, done])


def feedback_line(criterion: str, score: int, low: int, high: int, note: str | None) -> str:
    """ "✓ Concept preservation: you answered 3; the expected answer was 3-4: <note>" (✗ when not accepted)."""
    ok = low <= score <= high
    expected = str(low) if low == high else f"{low}-{high}"
    why = f": {note}" if note else ""
    return (
        f"{'✓' if ok else '✗'} {CRITERION_NAMES[criterion].capitalize()}: you answered {score}; "
        f"the expected answer was {expected}{why}"
    )


class PracticeRounds:
    """The practice round of each dataset, over one `Database`; the acting user is the rater."""

    def __init__(self, database: Database, ratings: RatingTasks, guides: RatingGuides) -> None:
        self._database = database
        self._ratings = ratings
        self._guides = guides

    def next_task(self, user: str | None, dataset: str) -> PracticeTask | None:
        """`user`'s next practice task of `dataset`, or None when their round is done (or there is none)."""
        user = self._guides._rater(user)
        left = practice_left(self._database, user, dataset)
        if left <= 0:
            return None
        guide = self._database.guides.guide(dataset)
        assert guide is not None  # practice_left is 0 without a guide
        samples = self._database.guides.practice_samples(dataset)
        answered = {a.sample_id for a in self._database.guides.practice_answers(user, dataset)}
        size = min(guide.practice_tasks, len(samples))
        sample_id = next(sid for sid in practice_order(user, samples) if sid not in answered)
        return PracticeTask(
            dataset, self._ratings.blind_view(sample_id), size - left + 1, size, guide.practice_skippable
        )

    def answer(self, user: str | None, dataset: str, sample_id: int, scores: dict[str, int | None]) -> PracticeFeedback:
        """Store `user`'s practice answer (a score 0-4 of every criterion) to the practice task `sample_id` of
        `dataset` (the one `next_task` gave) and say what was expected."""
        user = self._guides._rater(user)
        task = self.next_task(user, dataset)
        if task is None or task.sample_id != sample_id:
            raise InputError("this practice task is no longer yours to answer: carry on with the task shown now")
        missing = [c for c in criteria() if scores.get(c) is None]
        if missing:
            raise InputError(
                "choose a score (0-4) for " + " and ".join(CRITERION_NAMES[c] for c in missing) + " before submitting"
            )
        given = {c: int(scores[c]) for c in criteria()}  # type: ignore[arg-type]
        self._database.guides.answer_practice(user, sample_id, given)
        gold = {a.criterion: a for a in self._database.gold.answers(dataset) if a.sample_id == sample_id}
        lines = [feedback_line(c, given[c], gold[c].low, gold[c].high, gold[c].note) for c in criteria() if c in gold]
        correct = sum(1 for c in criteria() if c in gold and gold[c].accepts(given[c]))
        return PracticeFeedback(lines, correct, practice_left(self._database, user, dataset))

    def skip(self, user: str | None, dataset: str) -> None:
        """`user` skips the rest of `dataset`'s practice round (only when the admin allows it)."""
        user = self._guides._rater(user)
        guide = self._database.guides.guide(dataset)
        if guide is None or not guide.practice_skippable:
            raise InputError("this practice round cannot be skipped: answer its tasks to start rating")
        self._database.guides.skip_practice(user, dataset)
