"""Statistics of sequences."""

#: How many values a sample needs at least.
MIN_SIZE = 1


def mean(values):
    """Average of the values.

    Parameters
    ----------
    values : list of float
        The sample.

    Returns
    -------
    float
        Their mean.
    """
    return sum(values) / len(values)


def median(values):
    """Middle of the sorted values.

    Parameters
    ----------
    values : list of float
        The sample.
    """
    ordered = sorted(values)
    return ordered[len(ordered) // 2]
