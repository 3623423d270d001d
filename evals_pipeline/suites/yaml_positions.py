"""YAML parsing that remembers where every key and value sits, so errors can name a line.

Scalars follow the YAML 1.2 core schema, as AgentV's parser does: `yes`, `no`, `on`, `off` and
dates stay strings, and only `true`/`false` are booleans.
"""

from __future__ import annotations

import functools
import marshal
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.suites import parse_cache
from evals_pipeline.suites.errors import SuiteError, SuiteIssue
from evals_pipeline.suites.probes import read_utf8

DataPath = tuple[str | int, ...]

_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_MERGE = "tag:yaml.org,2002:merge"


class Mark(NamedTuple):
    """A position in a file, 1-based; `file` is set for data spliced in from another file. (A
    tuple: a suite of 10,000 tests has a few hundred thousand of them.)"""

    line: int
    column: int
    file: str | None = None


RawMark = tuple[int, int, str | None]
"""A Mark as the tables keep it: a plain tuple, cheaper to make and to keep (parse_cache)."""


def _mark(node: Node) -> RawMark:
    return (node.start_mark.line + 1, node.start_mark.column + 1, None)


@dataclass
class Positions:
    """Where each key and value of a parsed document sits, by data path (`("tests", 0, "id")`)."""

    keys: dict[DataPath, RawMark] = field(default_factory=dict)
    values: dict[DataPath, RawMark] = field(default_factory=dict)

    def key(self, path: DataPath) -> Mark:
        """The key's position, else its value's, else the nearest enclosing node's."""
        if path in self.keys:
            return Mark._make(self.keys[path])
        return self.value(path)

    def value(self, path: DataPath) -> Mark:
        """The value's position, else the nearest enclosing node's."""
        for end in range(len(path), -1, -1):
            found = self.values.get(path[:end])
            if found is not None:
                return Mark._make(found)
        return Mark(1, 1)

    def move(self, old: DataPath, new: DataPath, index_offset: int = 0) -> None:
        """Re-file positions under `old` as `new`, after a deprecated key is renamed.

        `index_offset` shifts list indices when the moved list is appended to an existing one.
        """
        for table in (self.keys, self.values):
            for path in [p for p in table if p[: len(old)] == old]:
                rest = path[len(old) :]
                if index_offset and rest and isinstance(rest[0], int):
                    rest = (rest[0] + index_offset, *rest[1:])
                elif index_offset and not rest:
                    continue  # the old list itself: the existing one keeps its position
                table[new + rest] = table.pop(path)

    def graft(self, other: Positions, prefix: DataPath, file: str, line_offset: int = 0) -> None:
        """File `other` (the positions of another file's data) under `prefix`, naming `file`."""
        for mine, theirs in ((self.keys, other.keys), (self.values, other.values)):
            for path in [p for p in mine if p[: len(prefix)] == prefix and len(p) > len(prefix)]:
                del mine[path]
            for path, (line, column, named) in theirs.items():
                mine[prefix + path] = (line + line_offset, column, named or file)

    def remove_item(self, items: DataPath, index: int) -> None:
        """Forget item `index` of the list at `items` and shift the later items up by one."""
        for table in (self.keys, self.values):
            for path in [p for p in table if p[: len(items) + 1] == (*items, index)]:
                del table[path]
            later = sorted(
                (p for p in table if len(p) > len(items) and p[: len(items)] == items),
                key=lambda p: p[len(items)],
            )
            for path in later:
                position = path[len(items)]
                if isinstance(position, int) and position > index:
                    table[(*items, position - 1, *path[len(items) + 1 :])] = table.pop(path)

    def alias(self, source: DataPath, target: DataPath) -> None:
        """Let `target` point where `source` is, for keys synthesised from another key."""
        if source in self.keys:
            self.keys[target] = self.keys[source]
        if source in self.values:
            self.values[target] = self.values[source]


class _KeptPositions(Positions):
    """The positions of a kept parse (parse_cache), found by parsing its text again when first
    used (by a problem to report or a renamed key to re-file): most loads never need them."""

    def __init__(self, text: str, file: str) -> None:  # no keys nor values: __getattr__ finds them
        self._text, self._file = text, file

    def __getattr__(self, name: str) -> Any:
        if name not in ("keys", "values"):
            raise AttributeError(name)
        parsed = parse_yaml(self._text, self._file).positions
        self.keys, self.values = parsed.keys, parsed.values
        return getattr(self, name)


@dataclass
class YamlDocument:
    """Parsed data (plain dicts, lists and scalars) and the positions of its nodes."""

    file: str
    data: Any
    positions: Positions


class _Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with the YAML 1.2 core schema's implicit types instead of YAML 1.1's."""

    yaml_implicit_resolvers: dict[Any, Any] = {}  # PyYAML's class-level registry, own copy


_Yaml12Loader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Yaml12Loader.add_implicit_resolver(
    _INT, re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
_Yaml12Loader.add_implicit_resolver(
    _FLOAT,
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)
_Yaml12Loader.add_implicit_resolver(
    _NULL, re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
_Yaml12Loader.add_implicit_resolver(_MERGE, re.compile(r"^(?:<<)$"), ["<"])


class _Yaml12CLoader(getattr(yaml, "CSafeLoader", _Yaml12Loader)):  # type: ignore[misc]
    """The same schema on libyaml's parser: composing 20,000 tests takes seconds, not a minute."""

    yaml_implicit_resolvers = _Yaml12Loader.yaml_implicit_resolvers


def parse_yaml(text: str, file: str) -> YamlDocument:
    """Parse one YAML document, raising SuiteError with the file position of any problem."""
    try:
        loader, root = _c_compose(text)
    except yaml.YAMLError:
        # A broken file is parsed again by PyYAML, whose messages and positions the fixes read.
        loader, root = _python_compose(text, file)
    builder = _Builder(loader, file)
    data = builder.build(root, ()) if root is not None else None
    if builder.issues:
        raise SuiteError(builder.issues)
    return YamlDocument(file=file, data=data, positions=builder.positions)


def _c_compose(text: str) -> tuple[yaml.SafeLoader, Node | None]:
    """libyaml's loader and the document's root node; raises yaml.YAMLError."""
    loader: yaml.SafeLoader = _Yaml12CLoader(text)
    try:
        return loader, loader.get_single_node()
    finally:
        loader.dispose()


_SYNTAX_FIX = "check the indentation and quoting around this position"


def _python_compose(text: str, file: str) -> tuple[yaml.SafeLoader, Node | None]:
    """PyYAML's loader and the document's root node; any problem is a SuiteError at its place."""
    try:
        loader = _Yaml12Loader(text)
    except yaml.reader.ReaderError as exc:
        # A control character (a NUL of a binary file): PyYAML gives its offset, not a line.
        line, column = _line_column(text, exc.position)
        raise SuiteError(
            [
                SuiteIssue(
                    file,
                    line,
                    column,
                    f"invalid YAML: the control character #x{exc.character:04x} is not allowed",
                    "this looks like a binary file: name a text eval file, or remove the "
                    "character (write it as an escape such as \\x00 in a quoted string)",
                )
            ]
        ) from None
    try:
        return loader, loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        raise SuiteError([_syntax_issue(exc, file)]) from None
    except yaml.YAMLError as exc:
        raise SuiteError([SuiteIssue(file, 1, 1, f"invalid YAML: {exc}", _SYNTAX_FIX)]) from None
    finally:
        loader.dispose()


def _line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset in `text`."""
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def _syntax_issue(exc: yaml.MarkedYAMLError, file: str) -> SuiteIssue:
    mark = exc.problem_mark or exc.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = exc.problem or "syntax error"
    message = f"invalid YAML: {problem}"
    if exc.context:
        started = exc.context_mark
        if started and mark and started.line != mark.line:
            message += f" ({exc.context} started at line {started.line + 1})"
        else:
            message += f" ({exc.context})"
    if "\\t" in problem or "tab" in problem:
        fix = "indent with spaces; YAML does not allow tabs for indentation"
    elif "mapping values are not allowed" in problem:
        fix = "quote the value if it contains ': ', or fix the indentation of this key"
    elif "expected a single document" in problem:
        fix = "keep one document per file: remove the extra '---'"
    else:
        fix = _SYNTAX_FIX
    return SuiteIssue(file, line, column, message, fix)


class _Builder:
    """Turns composed nodes into plain data, recording positions and structural issues."""

    def __init__(self, loader: yaml.SafeLoader, file: str) -> None:
        self.loader = loader
        self.file = file
        self.positions = Positions()
        self.issues: list[SuiteIssue] = []
        self._stack: set[int] = set()

    def issue(self, node: Node, message: str, fix: str) -> None:
        line, column, _ = _mark(node)
        self.issues.append(SuiteIssue(self.file, line, column, message, fix))

    def build(self, node: Node, path: DataPath) -> Any:
        self._note_value(node, path)
        if id(node) in self._stack:
            self.issue(node, "an alias refers to itself", "remove the recursive '*alias'")
            return None
        self._stack.add(id(node))
        try:
            if isinstance(node, ScalarNode):
                return self._scalar(node)
            if isinstance(node, SequenceNode):
                return self._sequence(node, path)
            if isinstance(node, MappingNode):
                return self._mapping(node, path)
            return None
        finally:
            self._stack.discard(id(node))

    def _note_value(self, node: Node, path: DataPath) -> None:
        self.positions.values[path] = _mark(node)

    def _sequence(self, node: SequenceNode, path: DataPath) -> list[Any]:
        items = []
        for index, item in enumerate(node.value):
            self.positions.keys[(*path, index)] = _mark(item)
            items.append(self.build(item, (*path, index)))
        return items

    def _mapping(self, node: MappingNode, path: DataPath) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        own: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                # `<<: *defaults` supplies defaults; the mapping's own keys may override them.
                sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
                for source in sources:
                    value = self.build(source, path)
                    if isinstance(value, dict):
                        merged = {**value, **merged}
                    else:
                        self.issue(source, "'<<' must merge a mapping", "merge an '&anchor' map")
                self.positions.values[path] = _mark(node)  # the merge source claimed it
                continue
            if not isinstance(key_node, ScalarNode):
                self.issue(key_node, "a key must be plain text", "write the key as a plain word")
                continue
            key = key_node.value
            if key in own:
                first_line = self.positions.keys[(*path, key)][0]
                self.issue(
                    key_node,
                    f"duplicate key '{key}' (first at line {first_line})",
                    f"keep one '{key}' in this mapping",
                )
                continue
            self.positions.keys[(*path, key)] = _mark(key_node)
            own[key] = self.build(value_node, (*path, key))
        return {**merged, **own}

    def _scalar(self, node: ScalarNode) -> Any:
        value: str = node.value
        try:
            if node.tag == _STR:
                return value
            if node.tag == _NULL:
                return None
            if node.tag == _BOOL:
                return value.lower() == "true"
            if node.tag == _INT:
                return _int(value)
            if node.tag == _FLOAT:
                return _float(value)
            return self.loader.construct_object(node, deep=True)
        except (ValueError, yaml.YAMLError):
            self.issue(
                node,
                f"cannot read the value {value!r} with tag {node.tag}",
                "remove the explicit '!tag' or quote the value",
            )
            return value


def _int(text: str) -> int:
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text)


def _float(text: str) -> float:
    lowered = text.lower().lstrip("+")
    if lowered in (".inf", "-.inf"):
        return float("-inf") if lowered.startswith("-") else float("inf")
    if lowered == ".nan":
        return float("nan")
    return float(text)


def read_yaml_file(path: Path) -> YamlDocument:
    """Read and parse a YAML file; a missing or unreadable file is a SuiteError too."""
    file = str(path)
    try:
        text = read_utf8(path)
    except FileNotFoundError:
        raise SuiteError(
            [SuiteIssue(file, 1, 1, "file not found", "check the path and the file name")]
        ) from None
    except IsADirectoryError:
        raise SuiteError(
            [SuiteIssue(file, 1, 1, "this is a folder, not a file", "name a YAML file")]
        ) from None
    except UnicodeDecodeError as exc:
        before = exc.object[: exc.start]
        line = before.count(b"\n") + 1
        column = len(before.rsplit(b"\n", 1)[-1].decode("utf-8", "replace")) + 1
        byte = exc.object[exc.start]
        raise SuiteError(
            [
                SuiteIssue(
                    file,
                    line,
                    column,
                    f"not UTF-8 text: byte 0x{byte:02x} ({exc.reason})",
                    "save the file as UTF-8 (a binary file is not an eval file)",
                )
            ]
        ) from None
    return _parse_kept(text, file)


def _parse_kept(text: str, file: str) -> YamlDocument:
    """parse_yaml, through parse_cache for a large file. A file with problems is not kept: its
    errors are made again each time."""
    if len(text) < parse_cache.MIN_CHARS:
        return parse_yaml(text, file)
    key = parse_cache.cache_key(text, file, _parser_identity())
    kept = parse_cache.load(key, file)
    if kept is not None:
        return YamlDocument(file=file, data=kept[0], positions=_KeptPositions(text, file))
    doc = _parse_data(text, file) or parse_yaml(text, file)
    parse_cache.store(key, file, doc.data)
    return doc


def _parse_data(text: str, file: str) -> YamlDocument | None:
    """The document's data with positions found when first used, as a kept parse has them: a
    10,000-test suite builds in ~0.2 s instead of ~0.8 s. None when the file has anything to
    report (a syntax error, a duplicate key) or merge keys: parse_yaml then builds it with
    positions."""
    try:
        loader, root = _c_compose(text)
        data = _DataBuilder(loader, file).build(root, ()) if root is not None else None
    except (yaml.YAMLError, _NeedsPositions):
        return None
    return YamlDocument(file=file, data=data, positions=_KeptPositions(text, file))


class _NeedsPositions(EvalsPipelineError):
    """The data-only build met what parse_yaml reports or handles with positions."""


class _DataBuilder(_Builder):
    """_Builder's data, without recording where each node sits."""

    def issue(self, node: Node, message: str, fix: str) -> None:
        raise _NeedsPositions

    def _note_value(self, node: Node, path: DataPath) -> None:
        pass

    def _sequence(self, node: SequenceNode, path: DataPath) -> list[Any]:
        return [self.build(item, path) for item in node.value]

    def _mapping(self, node: MappingNode, path: DataPath) -> dict[str, Any]:
        own: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE or not isinstance(key_node, ScalarNode):
                raise _NeedsPositions
            if key_node.value in own:  # a duplicate key
                raise _NeedsPositions
            own[key_node.value] = self.build(value_node, path)
        return own


@functools.cache
def _parser_identity() -> str:
    """PyYAML's version, this module's file and the marshal format: a kept parse is of this
    parser, and readable."""
    me = Path(__file__).stat()
    return f"{yaml.__version__}:{yaml.__with_libyaml__}:{me.st_size}:{me.st_mtime_ns}:{marshal.version}"
