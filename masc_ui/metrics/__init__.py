"""Scoring: MaSC (CP/PF + patch maps), subject strippers, and the records scorers exchange."""
from .masc import MaSC, MaSCResult
from .patch_maps import PatchMaps
from .sample import MetricValue, Sample
from .strippers import strip_subject_from_prompt

__all__ = ["MaSC", "MaSCResult", "MetricValue", "PatchMaps", "Sample", "strip_subject_from_prompt"]
