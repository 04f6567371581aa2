"""
Removes the build's records
===========================

Removes every file of the build's records folder (the journals of the examples recorded
so far) and leaves a forged record file saying ``plot_sleep.py`` took 0.1 s. When
``wait_for.txt`` names an example, it first waits (up to a minute) until another process's
journal holds that example's finished record: in a parallel build, that worker's journal
is then removed after its last line.
"""

import glob
import json
import os
import time
from pathlib import Path

records = os.path.join("..", "_build", "html", "docsaccel", "records")
if os.path.exists("wait_for.txt"):
    wanted = Path("wait_for.txt").read_text().strip()
    own = os.path.basename(glob.glob(os.path.join(records, f"journal-*-{os.getpid()}.jsonl"))[0])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lines = [
            json.loads(line)
            for path in glob.glob(os.path.join(records, "journal-*.jsonl"))
            if os.path.basename(path) != own
            for line in Path(path).read_text().splitlines()
        ]
        if any(r["name"] == wanted and r["finished_at"] for r in lines):
            break
        time.sleep(0.1)
# A record of this build (this example's own, as it started), to forge one from.
# Journals are named after the build and the process: journal-<build>-<pid>.jsonl.
(journal,) = glob.glob(os.path.join(records, f"journal-*-{os.getpid()}.jsonl"))
line = Path(journal).read_text().splitlines()[0]
forged = {
    **json.loads(line),
    "id": "examples/plot_sleep.py",
    "name": "plot_sleep.py",
    "status": "ok",
    "wall_seconds": 0.1,
    "error": None,
    "finished_at": "2026-01-01T00:00:00+00:00",
}
removed = 0
for path in glob.glob(os.path.join(records, "*")):
    os.remove(path)
    removed += 1
with open(os.path.join(records, "examples__plot_sleep.py.json"), "w") as stream:
    json.dump(forged, stream)
print("removed", removed)
