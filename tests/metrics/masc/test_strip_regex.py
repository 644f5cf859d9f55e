"""The regex subject stripper (METRICS.md "Subject stripping", the paper's) and the stripper dispatch."""

from __future__ import annotations

import pytest

from masc_ui.errors import InputError
from masc_ui.metrics import strip_subject_from_prompt
from masc_ui.metrics.masc.strippers import collapse_whitespace, strip_regex


@pytest.mark.parametrize(
    "prompt, name, expected",
    [
        # METRICS.md's example
        (
            "A photo of a kitten chasing a butterfly in a sunny garden",
            "kitten",
            "A photo of chasing a butterfly in a sunny garden",
        ),
        # articles a / an / the, any case, every occurrence
        ("an owl on a branch, an owl in flight", "owl", "on a branch, in flight"),
        ("The dog and the dog", "dog", "and"),
        ("THE Dog sits", "dog", "sits"),
        # article form present: bare occurrences elsewhere stay
        ("a dog next to another dog", "dog", "next to another dog"),
        # no article: every bare occurrence goes
        ("dog on the sofa, dog bed", "dog", "on the sofa, bed"),
        ("dog on a dog bed", "dog", "dog on bed"),
        ("Kitten, kitten and KITTEN", "kitten", ", and"),
        # word boundaries: plurals and longer words are not the name
        ("a kittens party", "kitten", "a kittens party"),
        ("a catalog of cats", "cat", "a catalog of cats"),
        ("a hotdog stand", "dog", "a hotdog stand"),
        # possessive: the name goes, "'s" stays (documented regex behaviour)
        ("the dog's ball", "dog", "'s ball"),
        # adjectives between article and name block the article form
        ("a fluffy kitten sleeping", "kitten", "a fluffy sleeping"),
        # multi-word names, with any whitespace between article and name
        ("a photo of a   teddy bear on a bed", "teddy bear", "a photo of on a bed"),
        ("teddy bear picnic", "teddy bear", "picnic"),
        # regex metacharacters are literal
        ("a c++ book on a desk", "c++", "a c++ book on a desk"),
        ("a (robot) toy", "(robot)", "a (robot) toy"),
        ("a r2-d2 figure in the rain", "r2-d2", "figure in the rain"),
        ("a dog.cat toy", "dog.cat", "toy"),
        ("a dogXcat toy", "dog.cat", "a dogXcat toy"),
        ("price $5 toy", "$5", "price $5 toy"),
        # name absent: prompt only whitespace-collapsed
        ("  a red car   on a road ", "kitten", "a red car on a road"),
        # name with surrounding spaces is trimmed
        ("a cat on a mat", "  cat ", "on a mat"),
    ],
)
def test_regex_stripper(prompt: str, name: str, expected: str) -> None:
    assert strip_subject_from_prompt(prompt, name) == expected
    assert strip_subject_from_prompt(prompt, name, "regex") == expected


@pytest.mark.parametrize("name", ["", "   ", "\t"])
def test_empty_name_matches_nothing(name: str) -> None:
    assert strip_subject_from_prompt(" a  cat ", name) == "a cat"
    assert strip_subject_from_prompt(" a  cat ", name, "spacy") == "a cat"


def test_none_stripper_returns_prompt_unchanged() -> None:
    prompt = "  A photo of a kitten  "
    assert strip_subject_from_prompt(prompt, "kitten", "none") is prompt


def test_whole_prompt_is_the_subject() -> None:
    assert strip_subject_from_prompt("a kitten", "kitten") == ""


def test_collapse_whitespace() -> None:
    assert collapse_whitespace(" a \n b\t\tc ") == "a b c"


def test_unknown_stripper_is_an_input_error() -> None:
    with pytest.raises(InputError, match="stripper must be one of"):
        strip_subject_from_prompt("a cat", "cat", "nltk")


@pytest.mark.parametrize("prompt, name, arg", [(None, "cat", "prompt"), ("a cat", 3, "object_name")])
def test_wrong_types_name_the_argument(prompt, name, arg) -> None:
    with pytest.raises(InputError, match=arg):
        strip_subject_from_prompt(prompt, name)


PROMPTS = [
    ("A photo of a kitten chasing a butterfly in a sunny garden", "kitten"),
    ("Two vintage motorcycles parked on a lonely desert road", "motorcycle"),
    ("the dog's ball on the grass", "dog"),
    ("An origami crane, a crane and the Crane", "crane"),
    ("a c++ book", "c++"),
    ("a teddy bear and a teddy  bear", "teddy bear"),
    ("r2-d2 in the desert", "r2-d2"),
    ("nothing here", "kitten"),
]


@pytest.mark.parametrize("prompt, name", PROMPTS)
def test_regex_agrees_with_masc_metric(prompt: str, name: str) -> None:
    masc_text = pytest.importorskip("masc.text", reason="masc-metric (test-only reference) not installed")
    assert strip_regex(prompt, name) == masc_text.strip_subject_from_prompt(prompt, name, "regex")
