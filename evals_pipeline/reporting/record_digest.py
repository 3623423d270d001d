"""The digest a report's case page key takes of one record: of its JSON as stored. A loader
computes it from the text it reads, so keying 10,000 pages serializes no record again
(html/page_cache.py)."""

from __future__ import annotations

import hashlib


def record_digest(text: str) -> bytes:
    """The digest of one record's JSON text."""
    return hashlib.sha256(text.encode()).digest()
