"""Importers of benchmark layouts (manifest, DreamBench++, DreamBooth, ImagenHub ratings) and the ImagenHub
rating reader.

`list_importers()` names them; `read_layout(name, path, **options)` parses a layout into plain records
(nothing written); `ingest(store, dataset, name, parsed)` writes them through the storage repositories,
idempotently, and returns an `ImportSummary` (imported / already present / skipped with where and why);
`ingest_all` does the same for layouts that hold several datasets (ImagenHub: one per task).
`parse_pairwise_manifest(path)` reads pairwise human judgments (which of two outputs is better) from a JSONL/CSV
file (nothing written); `read_pair_gold(path)` reads gold pairs and their accepted answers the same way.
"""

from .entries import ImportSummary, MetricEntry, Parsed, Problem, RatingEntry, SampleEntry
from .formats import IMPORTERS, ImporterSpec, get_importer, list_importers, read_layout
from .imagenhub import parse_imagenhub, read_imagenhub
from .pair_gold_manifest import read_pair_gold
from .pairwise_manifest import PairwiseEntry, ParsedJudgments, parse_pairwise_manifest

__all__ = [
    "IMPORTERS",
    "ImportSummary",
    "ImporterSpec",
    "MetricEntry",
    "PairwiseEntry",
    "Parsed",
    "ParsedJudgments",
    "Problem",
    "RatingEntry",
    "SampleEntry",
    "get_importer",
    "list_importers",
    "parse_imagenhub",
    "parse_pairwise_manifest",
    "read_imagenhub",
    "read_layout",
    "read_pair_gold",
]
