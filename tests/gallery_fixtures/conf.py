"""Sphinx configuration of the tiny galleries the gallery plugin tests build."""

extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
exclude_patterns = ["_build", "examples"]
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "show_memory": False,
    "reset_modules": (),
}
# Tests append settings below.
