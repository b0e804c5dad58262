"""The findings as JSON for machines (schema: docs/report-schema.md). Sorted keys, stable bytes.

Every evidence kind's section is a key of the findings already: nothing here knows the kinds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def render_json(findings: Mapping[str, Any]) -> str:
    return json.dumps(findings, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
