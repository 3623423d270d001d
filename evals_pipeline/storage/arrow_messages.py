"""Plain messages held as Arrow columns: a role and a text each, as pyarrow's JSON reader parsed
them from an output file (enrichers/arrow_output.py), written to Parquet and handed to graders
without a Python object per message. Rows and models are made only when a reader asks."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from evals_pipeline.models.messages import PlainMessages
from evals_pipeline.storage.parquet import string_array


def _strings(*values: str) -> pa.Array:
    # Arrow values from Python ones (pa.scalar, as `pc.equal(column, "x")` makes it) import
    # pandas, ~0.25 s: a value set is made from buffers instead (storage/parquet.py).
    made = string_array(values)
    assert isinstance(made, pa.Array)  # a few short strings: never chunked
    return made


_ASSISTANT = _strings("assistant")
_EMPTY = _strings("")


class ArrowMessages(PlainMessages):
    """Plain messages as two string columns of equal length, `role` and `content`."""

    __slots__ = ("content", "role")

    def __init__(self, role: pa.ChunkedArray, content: pa.ChunkedArray) -> None:
        super().__init__(None)
        self.role = role
        self.content = content

    def _make_rows(self) -> list[dict[str, Any]]:
        return [
            {"role": role, "content": content}
            for role, content in zip(self.role.to_pylist(), self.content.to_pylist(), strict=True)
        ]

    def __len__(self) -> int:
        return len(self.role)

    def assistant_turns(self) -> int:
        return int(pc.sum(pc.is_in(self.role, value_set=_ASSISTANT)).as_py() or 0)

    def text_chars(self) -> int:
        return int(pc.sum(pc.utf8_length(self.content)).as_py() or 0)

    def has_role(self, *roles: str) -> bool:
        return bool(pc.any(pc.is_in(self.role, value_set=_strings(*roles))).as_py())

    def first(self) -> tuple[str, str]:
        return self.role[0].as_py(), self.content[0].as_py()

    def after(self, rows: list[dict[str, Any]]) -> PlainMessages:
        """Prepended as chunks of their own: the long columns are shared, not copied."""
        roles = _strings(*(row["role"] for row in rows))
        texts = _strings(*(row["content"] for row in rows))
        return ArrowMessages(
            pa.chunked_array([roles, *self.role.chunks], pa.string()),
            pa.chunked_array([texts, *self.content.chunks], pa.string()),
        )

    def answer(self) -> str:
        answering = pc.and_(
            pc.is_in(self.role, value_set=_ASSISTANT),
            pc.invert(pc.is_in(self.content, value_set=_EMPTY)),
        )
        found = pc.indices_nonzero(answering)
        return str(self.content[found[-1].as_py()].as_py()) if len(found) else ""
