"""The suite and agent tags read from Dagster's own partition tags (the queue-side half is tested
against a real `dagster dev` in test_instance_settings.py and test_suite_component.py)."""

from __future__ import annotations

from evals_pipeline.instance.run_tags import eval_run_tags, range_agents


def test_one_agent_gets_evals_agent_and_several_only_the_list() -> None:
    assert eval_run_tags(["demo"], ["echo", "echo"]) == {
        "evals/suite": "demo",
        "evals/agents": "echo",
        "evals/agent": "echo",
    }
    assert eval_run_tags(["demo"], ["echo", "silent"]) == {
        "evals/suite": "demo",
        "evals/agents": "echo,silent",
    }
    assert eval_run_tags([], []) == {}


def test_agents_come_from_the_partition_or_the_range() -> None:
    assert range_agents({"dagster/partition/agent": "echo", "dagster/partition": "echo|a"}) == [
        "echo"
    ]
    assert range_agents({"dagster/partition": "silent|a"}) == ["silent"]
    ends = {
        "dagster/asset_partition_range_start": "a|x",
        "dagster/asset_partition_range_end": "c|y",
    }
    assert range_agents(ends) == ["a", "c"]  # only the ends when the range cannot be listed
    assert range_agents(ends, ["a|x", "a|y", "b|x", "c|y"]) == ["a", "a", "b", "c"]
    assert range_agents({"dagster/partition": "2026-01-01"}) == []  # not an eval partition
