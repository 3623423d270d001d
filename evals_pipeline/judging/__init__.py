"""The judged panel of docs/judging.md: grounded dimension votes, heuristics, pairwise comparison
and failure attribution, without Dagster."""
