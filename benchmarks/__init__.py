"""Benchmarks: evals-pipeline beside the floor, the same work done bare (README, "Benchmarks")."""
