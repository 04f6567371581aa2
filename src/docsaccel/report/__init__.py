"""Budget reports of a docs build: read timings, check budgets, compare builds, keep history.

Data flows one way: an input file (a docsaccel report JSON, a sphinx-gallery
``sg_execution_times.rst`` of any release, or its JUnit XML) is read by
:mod:`~docsaccel.report.inputs` into :class:`~docsaccel.report.model.Timing` entries;
the views render them and never re-measure:

- :mod:`~docsaccel.report.summary`: totals and rows shared by the views;
- :mod:`~docsaccel.report.markdown`, :mod:`~docsaccel.report.html`: the report views;
- :mod:`~docsaccel.report.check`: over budget or not (``docsaccel check``);
- :mod:`~docsaccel.report.compare`: regressions between two builds;
- :mod:`~docsaccel.report.history`: per-example medians and noise over recent builds.
"""
