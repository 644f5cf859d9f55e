"""Importers of benchmark layouts (manifest, DreamBench++, DreamBooth, ImagenHub ratings) and the ImagenHub
rating reader.

`list_importers()` names them; `read_layout(name, path, **options)` parses a layout into plain records
(nothing written); `ingest(store, dataset, name, parsed)` writes them through the storage repositories,
idempotently, and returns an `ImportSummary` (imported / already present / skipped with where and why);
`ingest_all` does the same for layouts that hold several datasets (ImagenHub: one per task).
"""
from .entries import ImportSummary, MetricEntry, Parsed, Problem, RatingEntry, SampleEntry
from .imagenhub import parse_imagenhub, read_imagenhub
from .registry import IMPORTERS, ImporterSpec, get_importer, list_importers, read_layout

__all__ = ["IMPORTERS", "ImportSummary", "ImporterSpec", "MetricEntry", "Parsed", "Problem", "RatingEntry",
           "SampleEntry", "get_importer", "list_importers", "parse_imagenhub", "read_imagenhub", "read_layout"]
