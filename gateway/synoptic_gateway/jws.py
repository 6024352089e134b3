"""PyJWT's token decoder, with its base64url check of each segment done in C.

PyJWT (2.15) checks that every character of the header, payload and signature is
in the base64url alphabet with a Python generator, byte by byte: for a provider's
1 kB token that is half the time of the whole check, RSA signature included. This
decoder applies the same rules (the alphabet, at most two ``=`` of padding only
where the length allows it, a canonical encoding) with one regular expression and
a look at the last character (PyJWT encodes the decoded segment again to compare);
everything else (signature, algorithms, claims) is PyJWT's own.
"""

from __future__ import annotations

import binascii
import re

from jwt.api_jws import PyJWS
from jwt.api_jwt import PyJWT
from jwt.exceptions import DecodeError
from jwt.utils import base64url_decode

_SEGMENT = re.compile(rb"[A-Za-z0-9_-]*(={0,2})")
_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
#: each character's value, for the bits a segment's last character leaves unused
_VALUE = bytes(_ALPHABET.index(c) if c in _ALPHABET else 0 for c in range(256))
#: the bits of the last character that encode nothing, by the length modulo 4
_UNUSED = {0: 0, 2: 0x0F, 3: 0x03}


def _canonical(stripped: bytes) -> bool:
    """Whether the segment (alphabet checked, padding removed, length modulo 4 not 1)
    is the one encoding of its bytes: the unused bits of its last character are 0."""
    unused = _UNUSED[len(stripped) % 4]
    return not unused or not _VALUE[stripped[-1]] & unused


class _JWS(PyJWS):
    @staticmethod
    def _decode_base64url_segment(segment: bytes, name: str) -> bytes:
        """As PyJWT's: the segment decoded, or :class:`DecodeError`."""
        match = _SEGMENT.fullmatch(segment)
        if match is None:
            raise DecodeError(f"Invalid {name} padding")
        padding = len(match.group(1))
        stripped = segment[: len(segment) - padding]
        if (padding and len(segment) % 4 != 0) or len(stripped) % 4 == 1:
            raise DecodeError(f"Invalid {name} padding")
        if not _canonical(stripped):
            raise DecodeError(f"Invalid {name} padding")
        try:
            return base64url_decode(stripped)
        except (TypeError, binascii.Error) as err:
            raise DecodeError(f"Invalid {name} padding") from err


class Decoder(PyJWT):
    """:class:`jwt.PyJWT` with the faster segment check (``decode`` as ``jwt.decode``)."""

    def __init__(self) -> None:
        super().__init__()
        self._jws = _JWS(options=self._get_sig_options())


#: the gateway's decoder (stateless: shared)
DECODER = Decoder()
