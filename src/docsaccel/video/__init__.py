"""Videos in gallery pages: the scraper, and the directive that publishes them.

The design, in full: the videos guide's *Design* section.
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
