"""Who decides the group, the automation and the tags of a suite's assets: the translator, for
the shipped code location and a project's EvalSuiteComponent alike (the assets themselves set
none of them)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import dagster as dg

from evals_pipeline.defs.automation import nightly, report_refresh
from evals_pipeline.defs.case_failures import FAILURES
from evals_pipeline.suites import LoadedSuite

REPORT = "eval_report"


class EvalSuiteTranslator:
    """Decides the group, the automation and the tags of a suite's assets (as dagster-sling's
    translator does for a replication's streams); subclass it to decide otherwise.

    Keys stay `<suite>/<layer>`: partition keys, the cases sensor, `evals-pipeline` and the run
    tags address a suite by them, so a suite's `name:` is what renames its assets.
    """

    def __init__(
        self,
        *,
        group_name: str | None = None,
        nightly_cron: str | None = None,
        nightly: bool = True,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        self.group_name = group_name
        self.nightly_cron = nightly_cron
        self.nightly = nightly
        self.tags = dict(tags or {})

    def get_group_name(self, suite: LoadedSuite) -> str:
        return self.group_name or suite.slug

    def get_automation_condition(
        self, suite: LoadedSuite, layer: str
    ) -> dg.AutomationCondition | None:
        """The layers run nightly (or never, with `nightly: false`); the report follows its
        grades either way; the failures list is no step's to run (defs/case_failures.py)."""
        if layer == FAILURES:
            return None
        if layer == REPORT:
            return report_refresh(self.nightly_cron) if self.nightly else _grades_updated()
        return nightly(self.nightly_cron) if self.nightly else None

    def get_asset_spec(self, spec: dg.AssetSpec, suite: LoadedSuite) -> dg.AssetSpec:
        layer = spec.key.path[-1]
        return spec.replace_attributes(
            group_name=self.get_group_name(suite),
            automation_condition=self.get_automation_condition(suite, layer),
        ).merge_attributes(tags=self.tags)


def _grades_updated() -> dg.AutomationCondition:
    """report_refresh() without its nightly part."""
    return (
        dg.AutomationCondition.any_deps_updated()
        & ~dg.AutomationCondition.any_deps_in_progress()
        & ~dg.AutomationCondition.in_progress()
    ).with_label("grades updated")


def translated(
    defs: dg.Definitions, suite: LoadedSuite, translator: EvalSuiteTranslator
) -> dg.Definitions:
    """`defs` with every asset spec of `suite` as `translator` decides it."""
    with warnings.catch_warnings():
        # map_asset_specs is a preview in Dagster 1.13; it is how a translator applies here.
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return defs.map_asset_specs(func=lambda spec: translator.get_asset_spec(spec, suite))
