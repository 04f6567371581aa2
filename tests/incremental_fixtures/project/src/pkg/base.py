"""Base classes."""


class Base:
    """Something that can describe itself."""

    def describe(self):
        """Say what this is."""
        return type(self).__name__
