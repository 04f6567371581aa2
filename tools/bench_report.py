"""Benchmark: Markdown and HTML views of a synthetic 1,000-example report.

Target: under 1 s each. The report is written to a temporary file, validated against
the schema and read back as the CLI would; each view is then timed once cold (the HTML
time includes importing matplotlib and drawing the chart). The last line is JSON.

Run: ``.venv/bin/python tools/bench_report.py``
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path

from docsaccel.report.html import render_html
from docsaccel.report.inputs import load_input
from docsaccel.report.markdown import render_markdown
from docsaccel.report.summary import summarize
from docsaccel.schema import validate_report

EXAMPLES = 1000


def synthetic_report(count: int) -> dict:
    rng = random.Random(0)
    examples = []
    for index in range(count):
        seconds = rng.lognormvariate(1.5, 1.2)
        budget = rng.choice([30.0, 60.0, 180.0, None])
        examples.append(
            {
                "schema": "docsaccel.record",
                "version": 1,
                "id": f"gallery{index % 7}/plot_example_{index:04d}.py",
                "gallery": f"gallery{index % 7}",
                "name": f"plot_example_{index:04d}.py",
                "status": "over-budget" if budget and seconds > budget else "ok",
                "wall_seconds": seconds,
                "cpu_seconds": seconds,
                "peak_rss_bytes": 10**8,
                "budget_seconds": budget,
                "budget_source": "pattern" if budget else "builtin",
                "fast": True,
                "knobs": {"rollouts": {"value": 1, "fast": 1, "full": 4}},
                "render": {
                    "HalfCheetah-v5#0": {
                        "fresh_renders": 7,
                        "reused_frames": 100,
                        "render_seconds": 0.3,
                        "saved_seconds": 2.0,
                    }
                },
            }
        )
    report = {
        "schema": "docsaccel.report",
        "version": 1,
        "generated_at": "2026-01-01",
        "build": {"wall_seconds": 900.0, "fast": True},
        "examples": examples,
    }
    return validate_report(report)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.json"
        path.write_text(json.dumps(synthetic_report(EXAMPLES)), encoding="utf-8")
        summary = summarize(load_input(path))
    start = time.perf_counter()
    markdown = render_markdown(summary)
    md_seconds = time.perf_counter() - start
    start = time.perf_counter()
    page = render_html(summary)
    html_seconds = time.perf_counter() - start
    print(f"Markdown: {len(markdown)} chars in {md_seconds:.4f}s")
    print(f"HTML: {len(page)} chars in {html_seconds:.4f}s")
    print(
        json.dumps(
            {
                "examples": EXAMPLES,
                "md_seconds": round(md_seconds, 4),
                "html_seconds": round(html_seconds, 4),
                "target_seconds": 1.0,
            }
        )
    )


if __name__ == "__main__":
    main()
