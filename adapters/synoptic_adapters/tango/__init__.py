"""Tango Controls adapter: the only package that imports ``tango`` (pytango).

:class:`synoptic_adapters.tango.source.TangoSource` implements
:class:`synoptic_adapters.source.Source` for
``tango://HOST:PORT/domain/family/member/attribute`` channels; settings are in
:mod:`synoptic_adapters.tango.settings`. This module imports nothing, so that the
``synoptic`` command loads without pytango until a Tango command runs.
"""
