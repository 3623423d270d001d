"""Benchmarks: evals-pipeline beside the floor, the same work done bare (README, "Benchmarks")."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
"""The repository: its workspace.yaml, and the folder that puts `benchmarks` on PYTHONPATH."""
