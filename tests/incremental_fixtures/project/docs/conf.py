import os
import sys

sys.path.insert(0, os.path.abspath("../src"))

project = "pkg"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx_gallery.gen_gallery",
    "docsaccel.gallery",
]
templates_path = ["_templates"]
exclude_patterns = ["_build", "examples", "sg_execution_times.rst"]
autosummary_generate = True
autosummary_ignore_module_all = False
html_theme = "alabaster"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "backreferences_dir": "gen_modules/backreferences",
    "doc_module": ("pkg",),
    "download_all_examples": False,
    "show_memory": False,
    "reset_modules": (),
}
