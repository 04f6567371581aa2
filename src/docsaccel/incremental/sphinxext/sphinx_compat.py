"""The parts of Sphinx's internals the Sphinx state uses that differ between the Sphinx
releases docsaccel supports (7.4 to 9.0), in one place.

- ``env.domains``: a plain ``{name: domain}`` dict before Sphinx 8.1, a container with
  ``sorted()`` and ``standard_domain`` since;
- ``env.doc2path``: a ``str`` before Sphinx 8.0, a path since.

Example::

    for domain in domains_in_order(env):
        domain.get_objects()
    standard_domain(env).anonlabels
    source_suffix(env, "index")       # '.rst'
"""

from __future__ import annotations

import os
from typing import Any

from sphinx.environment import BuildEnvironment

__all__ = ["domains_in_order", "source_suffix", "standard_domain"]


def domains_in_order(env: BuildEnvironment) -> list[Any]:
    """Every domain of the build, by name."""
    domains: Any = env.domains
    if hasattr(domains, "sorted"):
        return list(domains.sorted())
    return [domains[name] for name in sorted(domains)]


def standard_domain(env: BuildEnvironment) -> Any:
    """The ``std`` domain (labels, terms, documents)."""
    domain = getattr(env.domains, "standard_domain", None)
    return domain if domain is not None else env.get_domain("std")


def source_suffix(env: BuildEnvironment, docname: str) -> str:
    """The suffix of a document's source file (``.rst``)."""
    return os.path.splitext(str(env.doc2path(docname, False)))[1]
