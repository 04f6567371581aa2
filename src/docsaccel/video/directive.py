"""The ``docsaccel-video`` directive: an HTML5 ``<video>`` whose files are copied like images.

The design, in full: the videos guide's *Design* section.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from html import escape
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

__all__ = ["VideoDirective", "setup", "video_node"]

_MIME = {".mp4": "video/mp4", ".webm": "video/webm"}


class video_node(nodes.General, nodes.Element):
    """A video with its poster; ``uri`` and ``poster`` are paths relative to the source dir."""


class VideoDirective(SphinxDirective):
    """``.. docsaccel-video:: PATH`` with ``:poster: PATH`` and ``:alt: TEXT``."""

    required_arguments = 1
    final_argument_whitespace = True  # a path may hold spaces
    option_spec = {"poster": directives.unchanged, "alt": directives.unchanged}  # noqa: RUF012

    def run(self) -> list[nodes.Node]:
        uri = self.arguments[0]
        suffix = posixpath.splitext(uri)[1].lower()
        if suffix not in _MIME:
            raise self.error(f"docsaccel-video: {uri!r} is not a {' or '.join(_MIME)} file")
        node = video_node(alt=self.options.get("alt", ""))
        node["uri"] = self._collect(uri)
        poster = self.options.get("poster")
        node["poster"] = self._collect(poster) if poster else None
        node["mime"] = _MIME[suffix]
        return [node]

    def _collect(self, uri: str) -> str:
        # What Sphinx's ImageCollector does for image nodes: note the file, so the builder
        # copies it and rebuilds the page when it changes.
        relative, absolute = self.env.relfn2path(uri, self.env.docname)
        self.env.note_dependency(absolute)
        self.env.images.add_file(self.env.docname, relative)
        return relative


def _copy_video_files(app: Any, doctree: nodes.document, docname: str) -> None:
    # The HTML builder copies the files listed in builder.images; images nodes are added
    # by Sphinx itself, video nodes here.
    images = getattr(app.builder, "images", None)
    if images is None:
        return
    for node in _video_nodes(doctree):
        for uri in (node["uri"], node["poster"]):
            if uri:
                images[uri] = app.env.images[uri][1]


def _video_nodes(doctree: nodes.Node) -> Iterator[video_node]:
    """The video nodes of ``doctree``, in no particular order.

    An explicit stack rather than ``doctree.findall``, which nests one generator per level
    of the tree: this walks every page of every build, and most pages hold no video.
    """
    stack = [doctree]
    while stack:
        node = stack.pop()
        if isinstance(node, video_node):
            yield node
        stack.extend(node.children)


def _builder_uri(translator: Any, uri: str) -> str:
    builder = translator.builder
    return posixpath.join(builder.imgpath, builder.images[uri])


def visit_video_html(translator: Any, node: video_node) -> None:
    poster = node["poster"]
    attrs = 'class="docsaccel-video" controls preload="metadata" playsinline'
    if poster:
        attrs += f' poster="{escape(_builder_uri(translator, poster))}"'
    source = escape(_builder_uri(translator, node["uri"]))
    translator.body.append(
        f'<div class="docsaccel-video-container"><video {attrs} '
        f'aria-label="{escape(node["alt"])}"><source src="{source}" type="{node["mime"]}">'
        f"{escape(node['alt'] or 'video')}</video></div>\n"
    )
    raise nodes.SkipNode


def visit_video_other(translator: Any, node: video_node) -> None:
    if node["poster"]:
        image = nodes.image(uri=node["poster"], alt=node["alt"])
        image["candidates"] = {"*": node["poster"]}
        node.replace_self(image)
        image.walkabout(translator)
    raise nodes.SkipNode


def setup(app: Any) -> dict[str, Any]:
    other = (visit_video_other, None)
    app.add_node(
        video_node,
        html=(visit_video_html, None),
        latex=other,
        text=other,
        man=other,
        texinfo=other,
        epub=(visit_video_html, None),
    )
    app.add_directive("docsaccel-video", VideoDirective)
    app.connect("doctree-resolved", _copy_video_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
