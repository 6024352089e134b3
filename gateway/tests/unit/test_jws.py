"""The gateway's token decoder answers as PyJWT's own, for good and bad tokens."""

from __future__ import annotations

import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from synoptic_gateway.jws import DECODER

_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
_OPTIONS = {"require": ["sub", "exp"]}


def _token(**extra: object) -> str:
    claims = {"sub": "operator", "exp": int(time.time()) + 600, **extra}
    return jwt.encode(claims, _KEY, algorithm="RS256", headers={"kid": "k1"})


def _outcome(decode, token: str) -> object:
    try:
        return decode(token, _KEY.public_key(), algorithms=["RS256"], options=_OPTIONS)
    except jwt.PyJWTError as exc:
        return type(exc), str(exc)


def _variants() -> list[str]:
    """A good token and ways to spoil each of its segments."""
    good = _token(name="Øyvind", groups=["/operators"])
    head, body, sig = good.split(".")
    out = [good, _token(pad="x"), _token(pad="xx")]  # each length modulo 4
    for k, seg in enumerate((head, body, sig)):

        def swap(new: str, k: int = k) -> str:
            parts = [head, body, sig]
            parts[k] = new
            return ".".join(parts)

        out += [
            swap(seg + "="), swap(seg + "=" * (-len(seg) % 4)), swap(seg + "==="),
            swap(seg[:-1] + "!"), swap(seg[:5] + "+" + seg[6:]), swap(seg[:5] + "/" + seg[6:]),
            swap(seg + "A"), swap(seg[:-1]), swap(""), swap(seg + "=A"),
            swap(seg[:-1] + chr(ord(seg[-1]) ^ 1)),  # another last character
            swap(seg[:3] + "é" + seg[4:]), swap(seg[:3] + "\n" + seg[4:]),
        ]  # fmt: skip
    return [*out, "", "a.b", "a.b.c.d", good + "."]


@pytest.mark.parametrize("token", _variants())
def test_decoder_answers_as_pyjwt(token: str) -> None:
    assert _outcome(DECODER.decode, token) == _outcome(jwt.decode, token)


def test_decoder_reads_the_claims_of_a_good_token() -> None:
    claims = DECODER.decode(_token(), _KEY.public_key(), algorithms=["RS256"])
    assert claims["sub"] == "operator"


def test_every_last_character_is_judged_as_pyjwt_does() -> None:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    lengths = set()
    for pad in ("", "x", "xx"):  # payloads of three lengths modulo 4
        head, body, sig = _token(pad=pad).split(".")
        lengths.add(len(body) % 4)
        for last in alphabet:
            token = f"{head}.{body[:-1]}{last}.{sig}"
            assert _outcome(DECODER.decode, token) == _outcome(jwt.decode, token), last
    assert {2, 3} <= lengths
