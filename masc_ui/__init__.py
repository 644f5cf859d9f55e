"""MaSC Workbench: score, inspect and rate concept-driven text-to-image generation."""

__version__ = "0.2.0"
