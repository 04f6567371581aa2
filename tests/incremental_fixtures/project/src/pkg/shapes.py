"""Shapes."""

from pkg.base import Base


class Circle(Base):
    """A round shape.

    Parameters
    ----------
    radius : float
        Its radius.
    """

    def __init__(self, radius=1.0):
        self.radius = radius

    def area(self):
        """Its area."""
        return 3.14159 * self.radius**2
