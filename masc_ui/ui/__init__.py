"""Gradio Blocks of the web app: one module per tab; handlers call the workbench, never the DB or models."""

from __future__ import annotations

from .blocks import build_app

__all__ = ["build_app"]
