"""Sphinx configuration of docsaccel's own site: user guide, API reference, tutorials."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import docsaccel
from docsaccel.headless import ensure_headless_gl

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

# Tutorials render MuJoCo scenes: pick a working headless backend before any of them
# imports mujoco.
ensure_headless_gl()

project = "docsaccel"
author = "docsaccel developers"
copyright = "2026, docsaccel developers"
release = docsaccel.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "sphinx_gallery.gen_gallery",
    "docsaccel.gallery",
    # This site's own directive: the settings table, from the settings' declaration.
    "settings_table",
]

html_theme = "furo"
html_title = "docsaccel"
exclude_patterns = ["_build", "sg_execution_times.rst", "tutorials/README.rst"]
autodoc_member_order = "bysource"

sphinx_gallery_conf = {
    "examples_dirs": ["tutorials"],
    "gallery_dirs": ["auto_tutorials"],
    "filename_pattern": r"/.*\.py$",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
}

# Per-tutorial time budgets. `make docs-fast` (CI) turns the fast path on and budgets into
# hard limits with DOCSACCEL_FAST=1 and DOCSACCEL_ON_OVERRUN=fail.
docsaccel_budgets = "../conf/budgets.toml"
# The site's "Build budget report" page, with its time-vs-budget chart (drawn by a second
# process, about 0.5 s of CPU: nothing next to this site's tutorials).
docsaccel_report_page = "budget_report"
docsaccel_report_chart = True

nitpicky = False
os.environ.setdefault("PYTHONHASHSEED", "0")
