"""Videos in gallery pages: the scraper, and the directive that publishes them.

- :mod:`docsaccel.video.scraper`: a sphinx-gallery image scraper that embeds the mp4 and
  gif files an example writes (:func:`video_scraper`, :func:`embed`);
- :mod:`docsaccel.video.directive`: the ``docsaccel-video`` directive the scraper writes,
  which copies a video and its poster into the built site like images.

What writes the videos is render gating's (:class:`docsaccel.render.VideoFileRecorder`);
the two agree on what a video file is (:data:`docsaccel.contract.VIDEO_SUFFIXES`).

``docsaccel.video`` is also a Sphinx extension (it registers the directive), and
``"docsaccel.video.video_scraper"`` is the scraper's name in ``image_scrapers``::

    extensions = ["sphinx_gallery.gen_gallery", "docsaccel.video"]
    sphinx_gallery_conf = {"image_scrapers": ("matplotlib", "docsaccel.video.video_scraper")}
"""

from docsaccel.video.scraper import (
    SCAN_ENV,
    VIDEO_SUFFIXES,
    embed,
    find_new_videos,
    setup,
    video_scraper,
)

__all__ = ["SCAN_ENV", "VIDEO_SUFFIXES", "embed", "find_new_videos", "setup", "video_scraper"]
