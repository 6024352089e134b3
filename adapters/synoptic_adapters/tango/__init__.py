"""Tango Controls adapter: the only package that imports ``tango`` (pytango).

``TangoSource`` implements :class:`synoptic_adapters.source.Source` for
``tango://HOST:PORT/domain/family/member/attribute`` channels.
"""

from synoptic_adapters.tango.settings import TangoSettings, TangoSettingsError
from synoptic_adapters.tango.source import TangoSource

__all__ = ["TangoSettings", "TangoSettingsError", "TangoSource"]
