"""One layer's stored records read back into their models. A suite's resolved cases repeat the
same target and graders (10,000 cases, one target, a few graders): each distinct part is
validated once and shared by the cases that hold it (resolution shares the target too), which
halves reading a large suite's cases (~0.5 s of a 10,000-case report)."""

from __future__ import annotations

import json
from typing import Any

import orjson
from pydantic import BaseModel, TypeAdapter

from evals_pipeline.agents.registry import TargetSpec
from evals_pipeline.models.assertions import AssertionSpec
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.secrets import Slot, restore_slots

_TARGET: TypeAdapter[Any] = TypeAdapter(TargetSpec)
_ASSERTION: TypeAdapter[Any] = TypeAdapter(AssertionSpec)


class RecordReader:
    """Validates the records of one model, one JSON text at a time; for resolved cases, each
    distinct target and grader once per reader (they are frozen or never changed once made)."""

    def __init__(self, model: type[BaseModel], context: dict[str, Any] | None = None) -> None:
        self._model = model
        self._context = context  # storage/root.py's `record_context`: where paths resolve
        self._parts: dict[tuple[int, bytes], Any] = {}

    def read(self, text: str, slots: list[Slot] | None = None) -> BaseModel:
        """The record of a stored JSON text; `slots` (a resolved case's): the secrets to put
        back where they were scrubbed (secrets.restore_slots)."""
        if self._model is not ResolvedCase:
            return self._model.model_validate_json(text, context=self._context)
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError:
            # What orjson refuses (NaN, integers past 64 bits), pydantic reads.
            if not slots:
                return self._model.model_validate_json(text, context=self._context)
            data = json.loads(text)
        if slots:
            restore_slots(data, slots)
        if isinstance(data, dict):
            if isinstance(data.get("target"), dict):
                data["target"] = self._part(_TARGET, data["target"])
            if isinstance(data.get("assertions"), list):
                data["assertions"] = [self._part(_ASSERTION, a) for a in data["assertions"]]
        return self._model.model_validate(data, context=self._context)

    def _part(self, adapter: TypeAdapter[Any], value: Any) -> Any:
        # Keyed by the adapter too: a target and a grader with the same JSON are not one part.
        key = (id(adapter), orjson.dumps(value))
        part = self._parts.get(key)
        if part is None:
            part = self._parts[key] = adapter.validate_python(value)
        return part
