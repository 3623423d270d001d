"""Partition-key slugs: the stable, Dagster-safe names of suites, tests and agents."""

from __future__ import annotations

import hashlib
import re
import unicodedata

# Hyphens join the run they sit in, so "a - b" and "a-b" give the same slug.
_NOT_SLUG = re.compile(r"[^a-z0-9_]+")
# Slugs name folders (`<agent>/<case>/trial-0`); a file name is at most 255 bytes, so a longer
# slug keeps its start and a hash of the whole name.
MAX_SLUG = 100


def slugify(text: str) -> str:
    """Turn a human name into a partition key `[a-z0-9_-]+`.

    Dagster breaks silently on `|`, commas or `...` in partition keys, so every key is a slug.
    Accents are folded (`café` → `cafe`); runs of any other characters become one `-`. A slug
    longer than MAX_SLUG is cut, and ends with 8 hex digits of the name's SHA-1 so long names
    that share a start stay apart.
    """
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_SLUG.sub("-", folded.lower()).strip("-")
    if not slug:
        raise ValueError(f"{text!r} has no letters or digits to make a key from")
    if len(slug) > MAX_SLUG:
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
        slug = f"{slug[: MAX_SLUG - 9].rstrip('-')}-{digest}"
    return slug


def suite_slug(text: str) -> str:
    """A suite's slug: `slugify` with `_` for `-`, so it is a valid asset-key prefix and group."""
    return slugify(text).replace("-", "_")
