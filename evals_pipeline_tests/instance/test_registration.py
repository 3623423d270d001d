"""Only a suite's registration adds its case partitions: the instance refuses any other add."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs.partitions import case_partitions_name, register_cases
from evals_pipeline.instance.local import local_instance
from evals_pipeline.instance.registration import EvalInstance, UnregisteredCaseError


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    """The instance of a fresh home with the shipped settings, as every command opens it."""
    instance = local_instance(tmp_path / "home")
    assert isinstance(instance, EvalInstance)
    yield instance
    instance.dispose()


def test_a_case_partition_added_outside_registration_is_refused_with_the_fix(
    instance: dg.DagsterInstance,
) -> None:
    name = case_partitions_name("demo")
    assert register_cases(instance, "demo", ["greets", "waves"]) == ["greets", "waves"]

    with pytest.raises(UnregisteredCaseError) as refused:
        instance.add_dynamic_partitions(name, ["greetz"])
    message = str(refused.value)
    assert "'greetz' not added" in message and "suite 'demo'" in message
    assert "demo_cases sensor" in message and "evals-pipeline register" in message
    assert instance.get_dynamic_partitions(name) == ["greets", "waves"]

    # Registration still adds (in the suite's order) and removes.
    assert register_cases(instance, "demo", ["waves", "hops"]) == ["waves", "hops"]


def test_other_dynamic_partitions_are_added_freely(instance: dg.DagsterInstance) -> None:
    instance.add_dynamic_partitions("demo__failures", ["echo|greets"])
    instance.add_dynamic_partitions("regions", ["eu"])
    assert instance.get_dynamic_partitions("demo__failures") == ["echo|greets"]
    assert instance.get_dynamic_partitions("regions") == ["eu"]
