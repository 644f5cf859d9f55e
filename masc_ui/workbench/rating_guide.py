"""Rating guides: per dataset, a Markdown guide with example samples and their expected answers, shown to a rater
before their first task of the dataset and on demand, and the rater's way through it (guide read, practice round
done or skipped) before real tasks start (`practice.PracticeRounds` runs the practice round itself).

An admin sets the guide (each edit adds a version; a rater who read an older version is shown the new one before
their next task), its examples (`SAMPLE:CP:PF:NOTE`: a sample of the dataset, the expected concept-preservation and
prompt-following scores, `-` for none, and why), and the practice round (how many practice tasks, which gold tasks,
whether raters may skip it).

Raters stay blind: an example shows its images as blind files (`blind_files`: pixels only, no metadata) with its
prompt, expected answers and explanation; nothing names the dataset, the method or a metric. The guide's Markdown is
rendered on the server without raw HTML and without images (`render_markdown`), so a guide fetches nothing from
elsewhere.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError
from .database import Database
from .gold import GoldTasks
from .ratings import ANCHORS, CRITERION_NAMES, RatingTasks, criteria

if TYPE_CHECKING:
    from storage import GuideExampleRecord, GuideRecord

MAX_EXAMPLES = 6
"""Most examples a guide shows (`storage.repo.guides.MAX_EXAMPLES`)."""
MAX_PRACTICE_TASKS = 50
"""Most practice tasks a practice round holds (`storage.schema.MAX_PRACTICE_TASKS`)."""


def render_markdown(text: str) -> str:
    """HTML of the Markdown `text` (CommonMark and tables), safe to show raters: raw HTML shows as typed, images are
    not made (`![alt](url)` shows as text and a link), and links other than http(s) and mailto are dropped
    (markdown-it's own rule), so the page fetches nothing the guide names."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
    md.disable("image")
    html: str = md.render(text)
    return html.replace("<a href=", '<a target="_blank" rel="noopener noreferrer nofollow" href=')


@dataclass(frozen=True)
class ExampleView:
    """A guide example as a rater sees it: blind files, the prompt, the expected answers and why."""

    refs_picture: Path | None
    """The reference(s) as one picture (`blind_files`)."""
    out: Path
    """The output image (a video's poster frame)."""
    prompt: str
    expected: dict[str, int]
    """criterion -> expected score."""
    note: str
    problem: str | None = None
    """Why a stored file of the example cannot be shown (the picture in its place says so)."""

    def answers(self) -> list[str]:
        """One line per expected answer: "Concept preservation: 3 — the same subject with small differences ..."."""
        return [
            f"{CRITERION_NAMES[c].capitalize()}: {ANCHORS[c][1][self.expected[c]]}"
            for c in criteria()
            if c in self.expected
        ]


@dataclass(frozen=True)
class GuideView:
    """A dataset's current guide as a rater sees it. `dataset` stays on the server (raters are not shown it)."""

    dataset: str
    version: int
    html: str
    """The guide rendered (`render_markdown`)."""
    examples: list[ExampleView]
    practice_tasks: int
    practice_skippable: bool


@dataclass(frozen=True)
class GuideSummary:
    """A dataset's guide as an admin sees it."""

    dataset: str
    guide: GuideRecord | None
    versions: int
    examples: list[tuple[str, GuideExampleRecord]]
    """(sample name: external key or #id, example)."""
    practice: list[str]
    """Names of the practice samples."""

    def text(self) -> str:
        """Everything in plain text (`masc-ui guide show`)."""
        if self.guide is None:
            return f"dataset {self.dataset!r} has no rating guide (set one with masc-ui guide set)"
        g = self.guide
        skip = ", raters may skip it" if g.practice_skippable else ""
        lines = [
            f"rating guide of {self.dataset!r}: version {g.version} of {self.versions}, by {g.created_by or 'a local process'} "
            f"at {g.created_at:%Y-%m-%d %H:%M} UTC",
            f"practice round: {g.practice_tasks} task(s){skip}; practice samples: {', '.join(self.practice) or 'none'}",
            "",
            g.text,
            "",
            f"examples ({len(self.examples)}):",
        ]
        lines += [f"  {example_text(name, e)}" for name, e in self.examples]
        return "\n".join(lines)


def example_text(name: str, example: GuideExampleRecord) -> str:
    """`SAMPLE:CP:PF:NOTE`, as `parse_example` reads it (`-` for a criterion without an expected score)."""
    cp, pf = ("-" if v is None else str(v) for v in (example.cp, example.pf))
    return f"{name}:{cp}:{pf}:{example.note or ''}"


def parse_example(text: str) -> tuple[str, int | None, int | None, str | None]:
    """(sample name, expected cp, expected pf, note) of `SAMPLE:CP:PF:NOTE` (CP, PF: a score 0-4 or `-` for none;
    the note may hold colons and may be left out); InputError naming what is wrong."""
    parts = str(text).split(":", 3)
    if len(parts) < 3 or not parts[0].strip():
        raise InputError(
            f"example {str(text)[:60]!r}: write SAMPLE:CP:PF:NOTE, e.g. 'dog-3:3:-:the dog's colour changed' "
            "(SAMPLE: the external key or #id; CP, PF: a score 0-4 or - for none)"
        )
    scores: list[int | None] = []
    for name, value in zip(("CP", "PF"), parts[1:3]):
        value = value.strip()
        if value in ("", "-"):
            scores.append(None)
        elif value in ("0", "1", "2", "3", "4"):
            scores.append(int(value))
        else:
            raise InputError(f"example {str(text)[:60]!r}: {name} must be a score 0-4 or -, got {value!r}")
    if scores == [None, None]:
        raise InputError(f"example {str(text)[:60]!r}: give an expected score for CP, PF or both")
    note = parts[3].strip() if len(parts) > 3 else ""
    return parts[0].strip(), scores[0], scores[1], note or None


@dataclass(frozen=True)
class RaterStep:
    """What a rater is shown before their next task: `guide` (the guide of the next task's dataset, not read in its
    current version), `practice` (its practice round, not done), or `tasks` (real tasks)."""

    kind: str
    dataset: str | None = None
    guide: GuideView | None = None


class RatingGuides:
    """Rating guides over one `Database`: admins set them, raters read them (blind files through `RatingTasks`)."""

    def __init__(self, database: Database, ratings: RatingTasks, gold: GoldTasks) -> None:
        self._database = database
        self._ratings = ratings
        self._gold = gold
        self._known_raters: set[str] = set()

    # --- admins -----------------------------------------------------------------------------------------------

    def _admin(self, user: str | None) -> None:
        self._database.accounts.require_admin(user, "rating guides")

    def set_guide(
        self,
        *,
        user: str | None,
        dataset: str,
        text: str,
        examples: list[str] | None = None,
        practice_tasks: int | None = None,
        practice_samples: list[str] | None = None,
        practice_skippable: bool | None = None,
    ) -> GuideSummary:
        """Set `dataset`'s guide to `text` (a new version). `examples` (`SAMPLE:CP:PF:NOTE` each) replace the
        examples and `practice_samples` (gold samples, by external key or #id) the practice list when given;
        `practice_tasks` / `practice_skippable` None keep the current setting (0 / no for a first guide). Everything
        is checked before anything is stored, and stored in one transaction."""
        self._admin(user)
        self._database.require_dataset(dataset)
        text = str(text or "").strip()
        if not text:
            raise InputError("the guide is empty: write what raters should know (Markdown) before saving it")
        current = self._database.guides.guide(dataset)
        parsed = None if examples is None else [parse_example(e) for e in examples if str(e).strip()]
        if parsed is not None and len(parsed) > MAX_EXAMPLES:
            raise InputError(f"a guide shows at most {MAX_EXAMPLES} examples; {len(parsed)} were given")
        resolved = None
        if parsed is not None:
            resolved = []
            for name, cp, pf, note in parsed:
                sample = self._gold.find_sample(dataset, name)
                if sample.output is None:
                    raise InputError(f"sample {name!r} has no output image (ratings only): it cannot be an example")
                resolved.append((sample.id, cp, pf, note))
        practice_ids = None
        if practice_samples is not None:
            gold = self._database.gold.sample_ids(dataset)
            practice_ids = []
            for name in (p for p in practice_samples if str(p).strip()):
                sample = self._gold.find_sample(dataset, name)
                if sample.id not in gold:
                    raise InputError(
                        f"sample {name!r} is not a gold task: a practice task gives feedback from its accepted "
                        "answer; mark it first (Raters tab, Gold tasks, or masc-ui gold mark)"
                    )
                practice_ids.append(sample.id)
        n = practice_tasks if practice_tasks is not None else (current.practice_tasks if current else 0)
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_PRACTICE_TASKS:
            raise InputError(f"the number of practice tasks must be a whole number 0-{MAX_PRACTICE_TASKS}, got {n!r}")
        available = (
            len(practice_ids) if practice_ids is not None else len(self._database.guides.practice_samples(dataset))
        )
        if n > available:
            raise InputError(
                f"the practice round asks for {n} task(s) but {available} practice sample(s) are picked: pick at "
                "least as many gold tasks for practice, or ask for fewer (0 = no practice round)"
            )
        skippable = (
            practice_skippable if practice_skippable is not None else (current.practice_skippable if current else False)
        )
        self._database.guides.set_guide(
            dataset,
            text,
            practice_tasks=n,
            practice_skippable=bool(skippable),
            created_by=user,
            examples=resolved,
            practice=practice_ids,
        )
        return self.summary(user=user, dataset=dataset)

    def summary(self, *, user: str | None, dataset: str) -> GuideSummary:
        """`dataset`'s guide, examples and practice list (admins)."""
        self._admin(user)
        self._database.require_dataset(dataset)
        names = {s.id: s.external_key or f"#{s.id}" for s in self._database.samples.list(dataset)}
        return GuideSummary(
            dataset,
            self._database.guides.guide(dataset),
            len(self._database.guides.versions(dataset)),
            [(names.get(e.sample_id, f"#{e.sample_id}"), e) for e in self._database.guides.examples(dataset)],
            [names.get(sid, f"#{sid}") for sid in self._database.guides.practice_samples(dataset)],
        )

    def preview(self, *, user: str | None, dataset: str) -> GuideView | None:
        """`dataset`'s guide as raters see it (admins; None when there is none)."""
        self._admin(user)
        self._database.require_dataset(dataset)
        return self._view(dataset)

    # --- raters -----------------------------------------------------------------------------------------------

    def _rater(self, user: str | None) -> str:
        """`user` when it may rate, as the Rate tab's tasks ask (`RatingTasks.rater_of`: a login, a crowd study
        participant, or anybody without logins)."""
        user = self._ratings.rater_of(user)
        if user not in self._known_raters:  # created once (remembered: the check after each answer writes nothing)
            self._database.ratings.ensure_rater(user)
            self._known_raters.add(user)
        return user

    def _view(self, dataset: str) -> GuideView | None:
        guide = self._database.guides.guide(dataset)
        if guide is None:
            return None
        examples = []
        for e in self._database.guides.examples(dataset):
            view = self._ratings.blind_view(e.sample_id)
            expected = {c: v for c, v in (("cp", e.cp), ("pf", e.pf)) if v is not None}
            examples.append(ExampleView(view.refs_picture, view.out, view.prompt, expected, e.note or "", view.problem))
        return GuideView(
            dataset,
            guide.version,
            render_markdown(guide.text),
            examples,
            guide.practice_tasks,
            guide.practice_skippable,
        )

    def guide_for_task(self, user: str | None, sample_id: int | None) -> GuideView | None:
        """The guide of the dataset of the task on `user`'s screen (`sample_id`; None: of their next task), or None
        when that dataset has no guide (or no task is left)."""
        user = self._rater(user)
        if sample_id is None:
            task = self._ratings.next_task(user)
            if task is None:
                return None
            sample_id = task.sample_id
        return self._view(self._database.samples.get(sample_id).dataset)

    def next_step(self, user: str | None) -> RaterStep:
        """What `user` is shown before their next real task (`RaterStep`)."""
        user = self._rater(user)
        task = self._ratings.next_task(user)
        return RaterStep("tasks") if task is None else self.step_before(user, task.sample_id)

    def step_before(self, user: str | None, sample_id: int) -> RaterStep:
        """What `user` is shown before rating `sample_id` (the task the Rate tab has just put on screen): the guide
        or the practice round of its dataset when they are due, else `tasks`."""
        user = self._rater(user)
        pending = self._database.guides.pending(user, sample_id)
        if pending is None:
            return RaterStep("tasks")
        dataset, kind = pending
        if kind == "guide":
            return RaterStep("guide", dataset, self._view(dataset))
        return RaterStep("practice", dataset)

    def mark_read(self, user: str | None, dataset: str, version: int) -> None:
        """Record that `user` read version `version` of `dataset`'s guide (the one they were shown)."""
        user = self._rater(user)
        self._database.guides.mark_read(user, dataset, version)


def practice_left(database: Database, rater: str, dataset: str) -> int:
    """How many practice tasks of `dataset` `rater` has still to answer: the round's size (at most the practice
    samples there are) less those answered; 0 without a guide or a practice round."""
    guide = database.guides.guide(dataset)
    if guide is None or guide.practice_tasks <= 0:
        return 0
    samples = database.guides.practice_samples(dataset)
    answered = {a.sample_id for a in database.guides.practice_answers(rater, dataset)}
    return max(0, min(guide.practice_tasks, len(samples)) - len(answered & set(samples)))


def practice_order(rater: str, sample_ids: list[int]) -> list[int]:
    """`sample_ids` in `rater`'s own order (each rater meets the practice tasks in a different order)."""
    return sorted(sample_ids, key=lambda sid: hashlib.sha256(f"practice:{rater}:{sid}".encode()).hexdigest())
