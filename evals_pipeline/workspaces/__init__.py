"""Isolated workspaces for agent runs."""

from evals_pipeline.workspaces.temp import create_workspace

__all__ = ["create_workspace"]
