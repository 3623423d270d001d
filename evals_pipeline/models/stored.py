"""What every record written to disk shares: a format version with a migration hook, and paths
kept relative to the storage root, so moving the root (or reading it through another machine's
mirror) needs no rewriting of stored text (docs/durability.md, "Stored records")."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Protocol

from pydantic import (
    AfterValidator,
    BaseModel,
    Field,
    PlainSerializer,
    SerializationInfo,
    ValidationInfo,
    model_validator,
)

PATHS = "stored_paths"
"""The key of the `PathResolver` in the context a record is validated or serialized with."""


class PathResolver(Protocol):
    """Turns this process's paths into stored references and back (storage/root.py's
    StorageRoot): a path under the storage root is stored relative to it."""

    def reference(self, path: str) -> str:
        """`path` as stored: relative to the root when under it, else as it is."""
        ...

    def resolve(self, ref: str) -> str:
        """A stored reference (or an older record's absolute path or storage URI) as a path
        in this process."""
        ...


def paths_context(resolver: PathResolver) -> dict[str, Any]:
    """The context to validate or serialize a record with so its paths are resolved or made
    references against `resolver`'s root."""
    return {PATHS: resolver}


def _resolver(context: Any) -> PathResolver | None:
    return context.get(PATHS) if isinstance(context, dict) else None


def _resolve(value: str, info: ValidationInfo) -> str:
    resolver = _resolver(info.context)
    return resolver.resolve(value) if resolver is not None and value else value


def _reference(value: str, info: SerializationInfo) -> str:
    resolver = _resolver(info.context)
    return resolver.reference(value) if resolver is not None and value else value


StoredPath = Annotated[str, AfterValidator(_resolve), PlainSerializer(_reference, return_type=str)]
"""A path in memory; relative to the storage root on disk when validated and serialized with
`paths_context` (without it, the value passes through as it is)."""


class StoredRecord(BaseModel):
    """A record written to disk. `format_version`'s default is the current format; a record of
    an earlier one (no `format_version`: 0, the records written before versions) is upgraded by
    `upgrade`, one version at a time, before it is validated."""

    format_version: int = Field(
        default=1, description="The record's format, raised when its stored shape changes."
    )

    UNREDACTED: ClassVar[tuple[str, ...]] = ("case_key", "agent", "test_id")
    """Fields a secret scrub leaves as they are (secrets.Redactor.model): the names the suite
    chose and the paths made from them, by which records, folders and partitions are found. A
    name holding a secret's value is in the partition keys anyway; scrubbed here, it would only
    part the record from its case."""

    @classmethod
    def current_format(cls) -> int:
        default = cls.model_fields["format_version"].default
        assert isinstance(default, int)
        return default

    @classmethod
    def upgrade(cls, version: int, data: dict[str, Any]) -> dict[str, Any]:
        """The stored dict of format `version` as format `version + 1`. Format 0 (unversioned,
        paths absolute or storage URIs) reads as format 1 unchanged: `StoredPath` resolves
        those as it resolves references."""
        return data

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        version = data.get("format_version", 0)
        current = cls.current_format()
        if not isinstance(version, int) or version == current:
            return data
        if version > current:
            raise ValueError(
                f"format_version {version} is newer than this evals-pipeline reads ({current}); "
                "upgrade evals-pipeline to read it"
            )
        data = dict(data)
        while version < current:
            data = cls.upgrade(version, data)
            version += 1
        data["format_version"] = current
        return data
