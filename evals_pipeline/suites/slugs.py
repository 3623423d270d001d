"""Partition-key slugs: the stable, Dagster-safe names of suites, tests and agents."""

from __future__ import annotations

import re
import unicodedata

# Hyphens join the run they sit in, so "a - b" and "a-b" give the same slug.
_NOT_SLUG = re.compile(r"[^a-z0-9_]+")


def slugify(text: str) -> str:
    """Turn a human name into a partition key `[a-z0-9_-]+`.

    Dagster breaks silently on `|`, commas or `...` in partition keys, so every key is a slug.
    Accents are folded (`café` → `cafe`); runs of any other characters become one `-`.
    """
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_SLUG.sub("-", folded.lower()).strip("-")
    if not slug:
        raise ValueError(f"{text!r} has no letters or digits to make a key from")
    return slug


def suite_slug(text: str) -> str:
    """A suite's slug: `slugify` with `_` for `-`, so it is a valid asset-key prefix and group."""
    return slugify(text).replace("-", "_")
