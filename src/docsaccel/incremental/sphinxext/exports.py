"""What a page's output takes from other documents, and what each document offers them.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import hashlib
import pickle
import re
from collections.abc import Iterable, Mapping
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.environment import BuildEnvironment
from sphinx.util import docname_join

from docsaccel.incremental.sphinxext.sphinx_compat import domains_in_order, standard_domain

__all__ = [
    "changed_keys",
    "domain_digests",
    "filled_late",
    "intersphinx_digest",
    "navigation",
    "numbers_digest",
    "offers",
    "placeholders",
    "references",
]

#: Domains resolved by name, for which ``name:`` keys are enough.
NAMED_DOMAINS = frozenset({"py", "std", ""})
_SPLIT = re.compile(r"[.:/\s]+")


def name_key(target: str) -> str:
    """``name:<last part>`` of a reference target or an object's name."""
    text = str(target).strip().lstrip("~.!").removesuffix("()")
    parts = [p for p in _SPLIT.split(text) if p]
    return f"name:{(parts[-1] if parts else text).lower()}"


#: Extensions' classes replaced by what holds whatever other documents hold: viewcode's
#: anchor becomes a link to its module's page.
STATIC_PLACEHOLDERS = frozenset({"sphinx.ext.viewcode.viewcode_anchor"})


def placeholders(doctree: nodes.Node) -> dict[str, list[int]]:
    """``{class: [how many nodes, how many children they hold]}`` of the nodes of
    extensions' own classes in ``doctree``.

    Docutils' classes and Sphinx's ``addnodes`` are left out: what Sphinx resolves in
    them (references, toctrees, ``only``) has rules of its own here."""
    counts: dict[str, list[int]] = {}
    for node in doctree.findall(nodes.Element):
        kind = type(node)
        module = kind.__module__
        if module.startswith("docutils.") or module == "sphinx.addnodes":
            continue
        name = f"{module}.{kind.__qualname__}"
        if name not in STATIC_PLACEHOLDERS:
            count = counts.setdefault(name, [0, 0])
            count[0] += 1
            count[1] += len(node.children)
    return counts


def filled_late(read: dict[str, Any], resolved: nodes.Node) -> list[str]:
    """The classes of ``read`` (:func:`placeholders` of the page as read) whose nodes
    were replaced, or filled in place, when the page was written: fewer nodes, or other
    children, in the ``resolved`` page."""
    if not read:
        return []
    now = placeholders(resolved)
    return sorted(name for name, count in read.items() if now.get(name) != list(count))


def references(doctree: nodes.document, docname: str) -> dict[str, Any]:
    """``refs``, ``domains``, ``numref``, ``toctree`` and ``placeholders`` of a page
    (the caching guide's design)."""
    refs: set[str] = set()
    domains: set[str] = set()
    numref = False
    for node in doctree.findall(addnodes.pending_xref):
        domain, kind = node.get("refdomain", ""), node.get("reftype", "")
        target = node.get("reftarget", "")
        if domain == "std" and kind == "doc":
            refs.add(f"doc:{docname_join(node.get('refdoc', docname), target)}")
            continue
        refs.add(name_key(target))
        if domain not in NAMED_DOMAINS:
            domains.add(domain)
        numref = numref or kind == "numref"
    toctree = {
        entry
        for node in doctree.findall(addnodes.toctree)
        for entry in node.get("includefiles", ())
    }
    return {
        "refs": sorted(refs),
        "domains": sorted(domains),
        "numref": numref,
        "toctree": sorted(toctree),
        "placeholders": placeholders(doctree),
    }


def _digest(parts: Iterable[Any]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(repr(part).encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()[:16]


def _node_text(node: Any) -> str:
    return node.pformat() if isinstance(node, nodes.Node) else repr(node)


def offers(env: BuildEnvironment, docnames: Iterable[str]) -> dict[str, dict[str, str]]:
    """``{docname: {key: digest}}``: what resolves in each document (the caching guide's design)."""
    wanted = set(docnames)
    entries: dict[str, dict[str, list[Any]]] = {d: {} for d in wanted}
    for domain in domains_in_order(env):
        for name, dispname, kind, docname, anchor, priority in domain.get_objects():
            if docname in wanted:
                item = (domain.name, name, dispname, kind, anchor, priority)
                entries[docname].setdefault(name_key(name), []).append(item)
    std = standard_domain(env)
    for name, value in std.anonlabels.items():
        if value and value[0] in wanted:
            entries[value[0]].setdefault(name_key(name), []).append(("anonlabel", name, *value))
    found: dict[str, dict[str, str]] = {}
    for docname in wanted:
        keys = {key: _digest(sorted(items, key=repr)) for key, items in entries[docname].items()}
        keys[f"doc:{docname}"] = _digest(_title_parts(env, docname))
        keys[f"toc:{docname}"] = _digest(_toc_parts(env, docname))
        found[docname] = keys
    return found


def _title_parts(env: BuildEnvironment, docname: str) -> list[str]:
    return [_node_text(env.titles.get(docname)), _node_text(env.longtitles.get(docname))]


def _toc_parts(env: BuildEnvironment, docname: str) -> list[Any]:
    """What a toctree of another page shows of a document: its titles, its sections, and
    how deep (its ``:tocdepth:`` field)."""
    depth = (env.metadata.get(docname) or {}).get("tocdepth")
    return [*_title_parts(env, docname), _node_text(env.tocs.get(docname)), repr(depth)]


def changed_keys(
    before: Mapping[str, Mapping[str, str]], after: Mapping[str, Mapping[str, str]]
) -> set[str]:
    """The keys whose digest differs, or that appear or vanish, in any document."""
    changed: set[str] = set()
    for docname in set(before) | set(after):
        old, new = before.get(docname, {}), after.get(docname, {})
        changed |= {key for key in set(old) | set(new) if old.get(key) != new.get(key)}
    return changed


def _stable(value: Any, depth: int = 0) -> Any:
    """A form of ``value`` that prints the same in every process (sets sorted); raises
    :class:`ValueError` for what it cannot put so (a cycle, an object it does not know)."""
    if depth > 40:
        raise ValueError("too deep")
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return value
    if isinstance(value, Mapping):
        items = [(_stable(k, depth + 1), _stable(v, depth + 1)) for k, v in value.items()]
        return ("map", sorted(items, key=repr))
    if isinstance(value, (set, frozenset)):
        return ("set", sorted((_stable(v, depth + 1) for v in value), key=repr))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_stable(v, depth + 1) for v in value])
    if isinstance(value, nodes.Node):
        return ("node", value.pformat())
    raise ValueError(f"cannot compare {type(value).__name__}")


def domain_digests(env: BuildEnvironment) -> dict[str, str | None]:
    """``{domain: digest of its data}`` of the domains not resolved by name; ``None``
    when its data cannot be compared (then it counts as changed)."""
    found: dict[str, str | None] = {}
    for name, data in env.domaindata.items():
        if name in NAMED_DOMAINS:
            continue
        try:
            found[name] = _digest([_stable(data)])
        except (ValueError, TypeError, RecursionError):
            found[name] = None
    return found


def numbers_digest(env: BuildEnvironment) -> str:
    return _digest([_stable(env.toc_secnumbers), _stable(env.toc_fignumbers)])


def intersphinx_digest(env: BuildEnvironment) -> str | None:
    """A digest of the inventories ``sphinx.ext.intersphinx`` resolves external
    references with (``None``: not loaded)."""
    inventory = getattr(env, "intersphinx_named_inventory", None)
    if inventory is None:
        return None
    try:
        return hashlib.sha256(pickle.dumps(inventory, pickle.HIGHEST_PROTOCOL)).hexdigest()[:16]
    except (pickle.PicklingError, TypeError, AttributeError):
        return "unpicklable"


def navigation(env: BuildEnvironment, root: str) -> tuple[str, dict[str, str]]:
    """The digest of what navigation can show, and ``{docname: digest}`` of each document's
    part in it (to say what changed)."""
    parts: dict[str, str] = {}
    order: list[str] = []
    stack, seen = [root], set()
    while stack:
        docname = stack.pop()
        if docname in seen:
            continue
        seen.add(docname)
        order.append(docname)
        children = env.toctree_includes.get(docname, [])
        parts[docname] = _digest([*_toc_parts(env, docname), children])
        stack.extend(reversed(children))
    parts["<documents>"] = _digest(sorted(env.found_docs))
    return _digest([order, [parts[d] for d in order], parts["<documents>"]]), parts


def describe_navigation(before: Mapping[str, str], after: Mapping[str, str]) -> str:
    """``navigation changed (1 page added, 2 titles or sections changed)``."""
    old_docs = set(before) - {"<documents>"}
    new_docs = set(after) - {"<documents>"}
    added, removed = len(new_docs - old_docs), len(old_docs - new_docs)
    changed = sorted(d for d in old_docs & new_docs if before[d] != after[d])
    words = []
    if added:
        words.append(f"{added} page{'s' if added > 1 else ''} added")
    if removed:
        words.append(f"{removed} page{'s' if removed > 1 else ''} removed")
    if changed:
        more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
        words.append(f"the title, sections or toctree of {changed[0]}{more} changed")
    if not words and before.get("<documents>") != after.get("<documents>"):
        words.append("documents outside the toctree added or removed")
    return f"navigation changed ({', '.join(words) or 'order changed'})"
