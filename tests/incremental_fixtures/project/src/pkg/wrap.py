"""A tool built on an installed library."""

from extmod import Tool


class MyTool(Tool):
    """The project's tool."""
