"""Run sphinx-gallery itself on a tiny gallery, so tests read files it really writes."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from helpers import build_server
from helpers.slow import require_slow

CONF = """
extensions = ["sphinx_gallery.gen_gallery"]
exclude_patterns = ["_build"]
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "junit": "sg-junit.xml",
    "show_memory": False,
    "plot_gallery": "True",
    "only_warn_on_example_error": True,
}
"""

EXAMPLES = {
    "plot_slow.py": '"""\nSlow\n====\n"""\nimport time\n\ntime.sleep(0.3)\n',
    "plot_fast.py": '"""\nFast\n====\n"""\nx = 1\n',
    "plot_broken.py": '"""\nBroken\n======\n"""\nraise RuntimeError("boom")\n',
}


def build_tiny_gallery(root: Path) -> Path:
    """Build a gallery of three examples (one failing) with Sphinx; return the source dir."""
    require_slow()
    src = root / "src"
    (src / "examples").mkdir(parents=True)
    (src / "conf.py").write_text(textwrap.dedent(CONF), encoding="utf-8")
    (src / "index.rst").write_text(
        "Tiny\n====\n\n.. toctree::\n\n   auto_examples/index\n", encoding="utf-8"
    )
    (src / "examples" / "README.txt").write_text("Examples\n========\n", encoding="utf-8")
    for name, code in EXAMPLES.items():
        (src / "examples" / name).write_text(code, encoding="utf-8")
    done = build_server.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(root / "out")],
        env={"MPLBACKEND": "agg", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return src
