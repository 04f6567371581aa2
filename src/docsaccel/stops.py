"""Stops of a Sphinx build whose message docsaccel has already logged: one line, status 2.

The design, in full: the budgets guide's *Design* section.
"""

from __future__ import annotations

import bdb
from typing import TypeVar

from sphinx.errors import ConfigError, ExtensionError
from sphinx.util import logging

__all__ = ["DocsaccelConfigError", "HandlerStop", "ReportedStop", "config_error", "reported"]

logger = logging.getLogger(__name__)

_Stop = TypeVar("_Stop", bound="ReportedStop")


class ReportedStop(bdb.BdbQuit):
    """A stop of the build whose message is already logged: ``sphinx-build`` prints
    nothing more and exits with status 2. Subclasses are Sphinx errors too."""


class DocsaccelConfigError(ConfigError, ReportedStop):
    """A configuration error whose message is already logged."""


class HandlerStop(ExtensionError, ReportedStop):
    """An error of another extension's event handler whose message is already logged."""


def reported(kind: type[_Stop], message: str) -> _Stop:
    """Log ``message`` (one line naming what failed) as Sphinx's error and return the
    ``kind`` of stop to raise."""
    logger.error(message)
    return kind(message)


def config_error(message: str) -> DocsaccelConfigError:
    """Log ``message`` (one line naming the setting and its value) as Sphinx's error and
    return the exception that stops the build."""
    return reported(DocsaccelConfigError, message)
