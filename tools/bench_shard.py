"""Plan-quality benchmark of the shard planner: makespan / lower bound on realistic galleries.

The timing table models published sphinx-gallery computation-time tables
(``sg_execution_times.rst`` of large galleries such as scikit-learn's and matplotlib's,
and pytorch/tutorials' recorded durations in ``.jenkins/metadata.json``): most examples
take seconds (a lognormal body, median 6 s), a minority take a minute or two, and a few
training or rendering tutorials take many minutes (pytorch/tutorials records 320 s to
380 s for several, up to 2000 s for its slowest). The tail here stops at about 10 minutes:
a longer one would be the lower bound on its own for N >= 4 and make every plan trivially
optimal. The table is drawn with a fixed seed, so every run prints the same numbers.

For N in {2, 4, 8, 16} it prints makespan / lower bound, where the lower bound is
max(longest example, total / N): 1.0 means no plan could finish sooner. The main table
decides ``worst_ratio`` (target <= 1.05); ``seeds_worst_ratio`` is the worst ratio over
further tables drawn the same way with other seeds, to show the result is not one lucky
draw. The last line is a JSON object.

Run: ``python tools/bench_shard.py``
"""

from __future__ import annotations

import json
import math
import random

from docsaccel.shard import plan_shards

SEED = 2026
EXTRA_SEEDS = range(1, 21)
SHARD_COUNTS = (2, 4, 8, 16)
TARGET = 1.05


def timing_table(seed: int) -> dict[str, float]:
    """Seconds per example of a 120-example gallery with a heavy tail."""
    rng = random.Random(seed)
    table: dict[str, float] = {}
    # Body: quick plotting/API examples, seconds long.
    for number in range(101):
        table[f"plot_example_{number:03d}.py"] = round(rng.lognormvariate(math.log(6.0), 1.0), 2)
    # Shoulder: examples that fit a small model or load a dataset.
    for number in range(14):
        table[f"plot_model_{number:02d}.py"] = round(rng.uniform(45.0, 180.0), 2)
    # Tail: training and rendering tutorials of many minutes.
    for number, seconds in enumerate((240.0, 320.0, 380.0, 480.0, 600.0)):
        table[f"train_tutorial_{number}.py"] = round(seconds * rng.uniform(0.8, 1.2), 2)
    return table


def ratios(table: dict[str, float]) -> dict[int, float]:
    return {n: plan_shards(table, n).ratio for n in SHARD_COUNTS}


def main() -> None:
    table = timing_table(SEED)
    total = sum(table.values())
    print(f"{len(table)} examples, {total:.0f} s in total, longest {max(table.values()):.0f} s")
    print(f"{'N':>3} {'lower bound s':>14} {'makespan s':>11} {'ratio':>7}")
    per_n = {}
    for n in SHARD_COUNTS:
        plan = plan_shards(table, n)
        per_n[n] = plan.ratio
        print(f"{n:>3} {plan.lower_bound:>14.1f} {plan.makespan:>11.1f} {plan.ratio:>7.4f}")
    seeds_worst = max(max(ratios(timing_table(seed)).values()) for seed in EXTRA_SEEDS)
    worst = max(per_n.values())
    print(f"worst ratio {worst:.4f} (target <= {TARGET}); over {len(EXTRA_SEEDS)} more seeds:")
    print(f"{seeds_worst:.4f}")
    result = {
        "benchmark": "shard_plan_quality",
        "examples": len(table),
        "seed": SEED,
        "ratios": {str(n): round(ratio, 4) for n, ratio in per_n.items()},
        "worst_ratio": round(worst, 4),
        "target": TARGET,
        "meets_target": worst <= TARGET,
        "seeds_worst_ratio": round(seeds_worst, 4),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
