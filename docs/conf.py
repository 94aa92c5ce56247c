"""Sphinx configuration: the API reference from the numpydoc docstrings, the guide pages
from the README's sections and the vignettes (Markdown, through MyST)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

project = "attnreg"
author = "the attnreg developers"
copyright = "the attnreg developers"
release = version = __import__("attnreg").__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
autosummary_generate = False
autodoc_typehints = "none"  # the numpydoc sections carry the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()
myst_heading_anchors = 3
# the README and the vignettes start at "#" and are included whole in guide pages
suppress_warnings = ["myst.header", "myst.xref_missing"]
html_theme = "alabaster"
