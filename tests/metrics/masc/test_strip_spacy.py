"""The spaCy subject stripper (METRICS.md "Subject stripping"): every example there, more cases, and
agreement with masc-metric 0.3.0's stripper on the same pipeline."""

from __future__ import annotations

import importlib.util

import pytest

from masc_ui.errors import ModelUnavailableError
from masc_ui.metrics import strip_subject_from_prompt
from masc_ui.metrics.masc.strippers import SPACY_PIPELINES, SpacyStripper, default_spacy_model, load_spacy_pipeline

pytestmark = pytest.mark.skipif(
    not any(importlib.util.find_spec(n) for n in SPACY_PIPELINES), reason="no en_core_web_sm pipeline installed"
)


@pytest.fixture(scope="module")
def stripper() -> SpacyStripper:
    return SpacyStripper.load()


CASES = [
    # METRICS.md's examples
    ("Two vintage motorcycles parked on a lonely desert road", "motorcycle", "parked on a lonely desert road"),
    ("a motorcycle rider", "motorcycle", "a rider"),
    # plural and capitals by lemma / lower-cased words
    ("A Kitten sleeping on a sofa", "kitten", "sleeping on a sofa"),
    ("three kittens on a sofa", "kitten", "on a sofa"),
    # noun-phrase pre-modifiers go with the mention, right-hand attachments stay
    (
        "A photo of a kitten chasing a butterfly in a sunny garden",
        "kitten",
        "A photo of chasing a butterfly in a sunny garden",
    ),
    ("a small, fluffy kitten sleeping", "kitten", "sleeping"),
    ("a red backpack next to a cat", "backpack", "next to a cat"),
    # possessives: the possessor and its marker go
    ("the dog's ball on the grass", "dog", "ball on the grass"),
    ("my robot toy in space", "robot toy", "in space"),
    # mention parsed as a modifier of a later word
    ("a dolphin swimming in the ocean", "dolphin", "swimming in the ocean"),
    # multi-word names, and the head-noun fallback when no full match exists
    ("cherry blossoms in spring", "cherry blossom", "in spring"),
    ("a bouquet on a table", "bouquet of flowers", "on a table"),
    ("the teddy bear's hat", "teddy bear", "hat"),
    # known limit: coordination keeps "and"
    ("A Kitten and a puppy", "kitten", "and a puppy"),
    # name absent: unchanged apart from whitespace
    ("a  red car on a road", "kitten", "a red car on a road"),
]


@pytest.mark.parametrize("prompt, name, expected", CASES)
def test_spacy_stripper(stripper: SpacyStripper, prompt: str, name: str, expected: str) -> None:
    assert stripper.strip(prompt, name) == expected
    assert strip_subject_from_prompt(prompt, name, "spacy") == expected


def test_every_mention_is_removed(stripper: SpacyStripper) -> None:
    text = stripper.strip("a cat on a mat next to the cat", "cat")
    assert "cat" not in text.split()


def test_mentions_are_token_spans(stripper: SpacyStripper) -> None:
    doc = stripper.nlp("a teddy bear and another teddy bear")
    assert stripper.mentions(doc, "teddy bear") == [(1, 3), (5, 7)]
    assert stripper.mentions(doc, "   ") == []


def test_pipeline_name_and_version_are_recorded(stripper: SpacyStripper) -> None:
    assert stripper.model_name.startswith("en_core_web_sm")
    assert stripper.model_name.endswith("-3.8.0")
    assert default_spacy_model() in SPACY_PIPELINES


def test_pipeline_loads_once() -> None:
    assert load_spacy_pipeline(default_spacy_model()) is load_spacy_pipeline(default_spacy_model())


def test_missing_pipeline_is_model_unavailable() -> None:
    with pytest.raises(ModelUnavailableError, match="not_a_spacy_pipeline"):
        load_spacy_pipeline("not_a_spacy_pipeline")


AGREEMENT = [p for p, _, _ in CASES] + [
    "A photo of a corgi dog running on the beach",
    "a dog wearing a red hat, the dog's tail wagging",
    "an oil painting of a cat in the style of Van Gogh",
    "The cat sat on the cat mat",
    "a purple cat-shaped teapot on a wooden table",
    "Cats and dogs playing together in a park",
    "a photo of the backpack in the snow with mountains in the background",
    "a cute kitten, a cute puppy and a cute bunny",
]
NAMES = ["kitten", "motorcycle", "dog", "cat", "teddy bear", "backpack", "teapot", "bouquet of flowers"]


@pytest.mark.parametrize("prompt", AGREEMENT)
def test_agrees_with_masc_metric(stripper: SpacyStripper, prompt: str) -> None:
    masc_text = pytest.importorskip("masc.text", reason="masc-metric (test-only reference) not installed")
    theirs = masc_text.SpacySubjectStripper(stripper.nlp)
    for name in NAMES:
        assert stripper.strip(prompt, name) == theirs.strip(prompt, name), (prompt, name)
