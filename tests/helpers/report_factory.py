"""Build docsaccel report JSON files per :mod:`docsaccel.schema`, validated on write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docsaccel.schema import validate_report


def record(name: str, seconds: float, budget: float | None = 60.0, **extra: Any) -> dict:
    """One example record in gallery ``tutorials``; ``extra`` overrides any key."""
    data = {
        "schema": "docsaccel.record",
        "version": 1,
        "id": f"tutorials/{name}",
        "gallery": "tutorials",
        "name": name,
        "status": "ok",
        "wall_seconds": seconds,
        "cpu_seconds": seconds,
        "peak_rss_bytes": 100 * 1024 * 1024,
        "budget_seconds": budget,
        "budget_source": "default" if budget is not None else "builtin",
        "budget_detail": "conf/budgets.toml default",
        "budget_reason": None,
        "fast": True,
        "knobs": {},
        "render": {},
        "error": None,
    }
    data.update(extra)
    return data


def write_report(path: Path, records: list[dict], wall_seconds: float = 100.0) -> Path:
    """Write a valid report of ``records``; a schema drift makes this raise."""
    report = {
        "schema": "docsaccel.report",
        "version": 1,
        "generated_at": "2026-11-29T17:00:00+00:00",
        "build": {
            "wall_seconds": wall_seconds,
            "fast": True,
            "on_overrun": "warn",
            "complete": True,
            "sphinx_gallery": "0.22.1",
            "docsaccel": "0.1.0",
        },
        "examples": sorted(records, key=lambda r: r["id"]),
    }
    validate_report(report, path)
    path.write_text(json.dumps(report), encoding="utf-8")
    return path
