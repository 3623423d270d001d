"""A suite as a Dagster component: a Dagster project adds an eval suite declaratively, with a
`defs.yaml` naming `evals_pipeline.defs.suite_component.EvalSuiteComponent`, or in Python with
`build_suite_defs`. Either gives the suite's assets, its case x agent partitions, its cases
sensor and its nightly automation, built by the same `suite_definitions` as the embedded code
location (docs/dagster-component.md)."""

# No `from __future__ import annotations`: Resolvable reads the field annotations at runtime.
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import dagster as dg
from dagster.components.component_scaffolding import scaffold_component
from dagster.components.resolved.context import ResolutionContext
from pydantic import BaseModel, Field

from evals_pipeline.defs.automation import nightly_cron, nightly_label
from evals_pipeline.defs.definitions import load_suites, storage_resources, suite_definitions
from evals_pipeline.defs.translator import EvalSuiteTranslator
from evals_pipeline.file_modes import apply_umask
from evals_pipeline.storage_env import storage_root, storage_root_from_env
from evals_pipeline.suites import LoadedSuite


def build_suite_defs(
    suite: str | Path,
    *,
    storage: str | None = None,
    translator: EvalSuiteTranslator | None = None,
) -> dg.Definitions:
    """The Definitions of one suite file for a Dagster project of one's own: its assets and
    partitions, its `<suite>_cases` sensor and a `<suite>_automation` sensor running its nightly
    pass. `storage` is the storage root (default EVALS_PIPELINE_STORAGE, else .evals/storage);
    suites sharing a root share its resources. No executor is set: the project's own applies."""
    [loaded] = _one_suite(suite)
    translator = translator or EvalSuiteTranslator()
    root = storage_root(storage) if storage else storage_root_from_env()
    when = nightly_label(translator.nightly_cron or nightly_cron()) if translator.nightly else "off"
    automation = dg.AutomationConditionSensorDefinition(
        f"{loaded.slug}_automation",
        target=dg.AssetSelection.key_prefixes([loaded.slug]),
        emit_backfills=True,
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=60,
        description=f"{loaded.slug}'s nightly pass ({when}), and its report once its grades change.",
    )
    return dg.Definitions.merge(
        suite_definitions(loaded, translator),
        dg.Definitions(sensors=[automation], resources=storage_resources(root)),
    )


def _one_suite(path: str | Path) -> list[LoadedSuite]:
    loaded = load_suites([path])
    if len(loaded) != 1:
        raise ValueError(
            f"{path} holds {len(loaded)} suites; an EvalSuiteComponent takes one eval file"
        )
    return loaded


class TranslationModel(dg.Model):
    """How the component's assets are grouped, automated and tagged."""

    group_name: str | None = None
    nightly_cron: str | None = None
    nightly: bool = True
    tags: dict[str, str] = {}


def resolve_translator(
    context: ResolutionContext, model: TranslationModel | None
) -> EvalSuiteTranslator:
    if model is None:
        return EvalSuiteTranslator()
    return EvalSuiteTranslator(**context.resolve_value(model.model_dump()))


class EvalSuiteScaffoldParams(BaseModel):
    """`dg scaffold defs ... --suite FILE`: the eval file the new defs.yaml names."""

    suite: str | None = Field(
        default=None,
        description="An existing eval file (from the current folder); default: a starter suite "
        "written beside the defs.yaml.",
    )


STARTER_SUITE = """\
# A starter suite that runs offline: a mock agent with a canned reply, no API key needed.
# Replace the target with a real agent (docs/agents.md) and the tests with your own.
name: {name}
execution:
  targets: [canned]
targets:
  - {{name: canned, provider: mock, response: "Hello, world!"}}
tests:
  - id: says-hello
    input: Say hello to the world.
    assertions: [{{type: icontains, value: hello}}]
"""


class EvalSuiteScaffolder(dg.Scaffolder[EvalSuiteScaffoldParams]):
    """Writes a defs.yaml that loads as it is: it names `--suite FILE`, else a starter suite
    written beside it (the component needs a suite; `attributes: {}` would not load)."""

    @classmethod
    def get_scaffold_params(cls) -> type[EvalSuiteScaffoldParams]:
        return EvalSuiteScaffoldParams

    def scaffold(self, request: dg.ScaffoldRequest[EvalSuiteScaffoldParams]) -> None:
        folder = request.target_path
        given = request.params.suite if request.params else None
        if given is None:
            name = folder.name.replace("_", "-")
            suite = folder / f"{folder.name}.eval.yaml"
            suite.write_text(STARTER_SUITE.format(name=name))
        else:
            suite = Path(given).expanduser().resolve()
            if not suite.is_file():
                raise FileNotFoundError(f"--suite: no eval file at {suite}")
        relative = Path(os.path.relpath(suite, folder.resolve())).as_posix()
        scaffold_component(request, {"suite": relative})


@dg.scaffold_with(EvalSuiteScaffolder)
@dataclass
class EvalSuiteComponent(dg.Component, dg.Resolvable):
    """An evals-pipeline suite as assets: cases -> agent_runs -> sessions -> grades ->
    judgments -> eval_report, partitioned by the suite's cases x agents.

    ```yaml
    type: evals_pipeline.defs.suite_component.EvalSuiteComponent
    attributes:
      suite: greetings.eval.yaml      # from this defs.yaml's folder
      storage: /data/evals            # optional storage root
      translation:                    # optional
        group_name: evals
        nightly_cron: "0 3 * * *"
        tags: {team: agents}
    ```
    """

    suite: str
    storage: str | None = None
    translator: Annotated[
        EvalSuiteTranslator,
        dg.Resolver(
            resolve_translator,
            model_field_name="translation",
            model_field_type=TranslationModel | None,
        ),
    ] = field(default_factory=EvalSuiteTranslator)

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        apply_umask()  # the process that loads the component writes privately (file_modes.py)
        return build_suite_defs(
            context.path / self.suite, storage=self.storage, translator=self.translator
        )
