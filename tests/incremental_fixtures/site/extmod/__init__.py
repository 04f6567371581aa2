"""An installed library, outside the project."""


class Tool:
    """A tool."""

    def run(self):
        """Run the tool."""
        return 1
