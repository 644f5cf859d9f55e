"""MaSC (METRICS.md "MaSC"): Concept Preservation and Prompt Following from one SigLIP2 pass, their patch maps, the
subject strippers and the registry's CP/PF scorer.

`from masc_ui.metrics.masc import MaSC` is the engine (`engine.MaSC`).
"""

from .engine import MaSC, MaSCResult

__all__ = ["MaSC", "MaSCResult"]
