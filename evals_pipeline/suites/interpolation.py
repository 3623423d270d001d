"""AgentV's `${{ VAR }}` environment interpolation in suite and targets files."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

_VARIABLE = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def interpolate(data: Any, env: Mapping[str, str] | None = None) -> Any:
    """Replace `${{ VAR }}` in every string value (not keys) with the environment's value.

    A missing variable becomes "" as in AgentV. `.env` files are deliberately not read: the
    process environment is the one source, so a run is reproducible from its command line.
    """
    values = os.environ if env is None else env
    if isinstance(data, str):
        return _VARIABLE.sub(lambda m: values.get(m.group(1), ""), data)
    if isinstance(data, list):
        return [interpolate(item, values) for item in data]
    if isinstance(data, dict):
        return {key: interpolate(value, values) for key, value in data.items()}
    return data
