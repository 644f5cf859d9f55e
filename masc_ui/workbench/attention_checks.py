"""Attention checks made from the data itself, so that nobody has to author them: for concept preservation, per
subject of a dataset, an output that *is* the subject's reference (accepted: 4) and an output of another subject
(accepted: 0-1), each with the prompt of one of the subject's samples. They are stored as samples without a method,
marked as gold tasks of kind `attention` in the same transaction (`store.gold.add_check`), mixed into raters' queues
like every gold task and never counted as ratings of a method. Making them again adds nothing (each has a fixed
external key, `attention:...`). Video outputs and ratings-only samples give no check."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .ratings import is_video_sample

if TYPE_CHECKING:
    from storage import SampleRecord

KEY_PREFIX = "attention:"
"""External keys of attention checks start with this."""
SAME_IMAGE = (4, 4)
"""Accepted concept preservation of an output that is the reference itself."""
OTHER_SUBJECT = (0, 1)
"""Accepted concept preservation of an output of another subject."""


@dataclass(frozen=True)
class AttentionCheck:
    """One attention check to store: a sample (its images by SHA-256) and its accepted `cp` range."""

    key: str
    references: tuple[str, ...]
    output: str
    prompt: str
    subject: str
    category: str | None
    low: int
    high: int
    note: str


def plan_attention_checks(samples: Iterable[SampleRecord]) -> list[AttentionCheck]:
    """The attention checks of a dataset's `samples` (see the module docstring): per subject (by name), the first
    of its image samples (by id) gives the references and the prompt; the other subject is the next one by name
    (cyclically), whose first image sample gives the output. One subject: no other-subject check."""
    first: dict[str, SampleRecord] = {}
    for s in sorted(samples, key=lambda s: s.id):
        usable = s.output is not None and s.references and s.prompt and not is_video_sample(s)
        if usable and not (s.external_key or "").startswith(KEY_PREFIX):
            first.setdefault(s.subject, s)
    subjects = sorted(first)
    checks = []
    for i, name in enumerate(subjects):
        own = first[name]
        assert own.prompt is not None and own.output is not None
        checks.append(
            AttentionCheck(
                f"{KEY_PREFIX}reference-as-output:{name}",
                own.references,
                own.references[0],
                own.prompt,
                name,
                own.category,
                *SAME_IMAGE,
                "the output is the subject's reference itself",
            )
        )
        if len(subjects) > 1:
            other = first[subjects[(i + 1) % len(subjects)]]
            assert other.output is not None
            checks.append(
                AttentionCheck(
                    f"{KEY_PREFIX}other-subject:{name}",
                    own.references,
                    other.output,
                    own.prompt,
                    name,
                    own.category,
                    *OTHER_SUBJECT,
                    f"the output shows another subject ({other.subject})",
                )
            )
    return checks
