"""What the tests share: tiny real projects and their builds, report files, a browser.

- :mod:`.gallery_build`: a tiny sphinx-gallery project and its real build;
- :mod:`.cache_project`: a tiny library project built from fresh copies, for the cache;
- :mod:`.sg_build`: sphinx-gallery's own timing files from a real tiny build;
- :mod:`.report_factory`: valid report files of chosen records;
- :mod:`.derived_files`: a page's copied source and search index entry;
- :mod:`.render_streams`: seeded MuJoCo envs and what they render;
- :mod:`.browser`: a headless Chromium on a locally served site;
- :mod:`.build_server`: the builds above, forked from a process that imported Sphinx once;
- :mod:`.slow`: every real build runs in a test marked ``slow``.
"""
