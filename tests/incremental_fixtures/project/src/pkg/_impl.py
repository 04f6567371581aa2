"""Private implementation details."""


def helper(x):
    """Help with ``x``.

    Parameters
    ----------
    x : int
        What to help with.
    """
    return x
