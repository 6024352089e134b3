"""Tokens (HS256, RS256, ES256), grants by pattern, anonymous access, Origins."""

from __future__ import annotations

import asyncio
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from synoptic_gateway.auth import Authenticator, AuthError, bearer_token
from synoptic_gateway.settings import Settings

SECRET = "unit-secret-of-at-least-32-bytes-long"


def _pem(private) -> str:
    return (
        private.public_key()
        .public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        .decode()
    )


def principal(auth: Authenticator, token: str | None):
    """The principal of ``token`` (no provider here: no I/O)."""
    return asyncio.run(auth.principal(token))


def _claims(**extra) -> dict:
    return {"sub": "op1", "exp": int(time.time()) + 60, **extra}


def test_anonymous_is_read_only_by_default() -> None:
    who = principal(Authenticator(Settings()), None)
    assert who.name == "anonymous" and who.may_read("ca://ANY") and not who.can_write


def test_a_configured_key_requires_a_token_unless_anonymous_is_allowed() -> None:
    with pytest.raises(AuthError):
        principal(Authenticator(Settings(jwt_secret=SECRET)), None)
    allowed = Settings(
        jwt_secret=SECRET, allow_anonymous=True, anonymous_read=("ca://PUB:*",)
    )
    who = principal(Authenticator(allowed), None)
    assert who.may_read("ca://PUB:X") and not who.may_read("ca://PRIV:X")


def test_tokens_are_refused_when_no_key_is_configured() -> None:
    with pytest.raises(AuthError):
        principal(Authenticator(Settings()), jwt.encode(_claims(), SECRET))


def test_hs256_grants_by_pattern() -> None:
    auth = Authenticator(Settings(jwt_secret=SECRET))
    who = principal(
        auth,
        jwt.encode(
            _claims(read=["ca://SR:*", "tango://*/sr/*/*/*"], write="ca://SR:SP*"),
            SECRET,
        ),
    )
    assert who.may_read("ca://SR:DCCT") and who.may_read("tango://h:1/sr/a/b/c")
    assert not who.may_read("ca://BR:DCCT")
    assert who.may_write("ca://SR:SP1") and not who.may_write("ca://SR:DCCT")


@pytest.mark.parametrize(
    ("private", "alg"),
    [
        (rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256"),
        (ec.generate_private_key(ec.SECP256R1()), "ES256"),
    ],
)
def test_public_key_tokens(private, alg: str) -> None:
    auth = Authenticator(Settings(jwt_public_key=_pem(private)))
    who = principal(auth, jwt.encode(_claims(write=["*"]), private, algorithm=alg))
    assert who.name == "op1" and who.can_write
    with pytest.raises(AuthError):  # HS256 signed with the public key: refused
        principal(auth, jwt.encode(_claims(), "x" * 32, algorithm="HS256"))


@pytest.mark.parametrize(
    "claims",
    [
        _claims(exp=int(time.time()) - 10),
        {"exp": int(time.time()) + 60},
        _claims(sub=""),
        _claims(read=[1, 2]),
    ],
)
def test_bad_claims_are_refused(claims: dict) -> None:
    with pytest.raises(AuthError):
        principal(
            Authenticator(Settings(jwt_secret=SECRET)), jwt.encode(claims, SECRET)
        )


def test_audience_and_issuer_are_checked_when_configured() -> None:
    auth = Authenticator(
        Settings(jwt_secret=SECRET, jwt_audience="gw", jwt_issuer="idp")
    )
    assert (
        principal(auth, jwt.encode(_claims(aud="gw", iss="idp"), SECRET)).name == "op1"
    )
    with pytest.raises(AuthError):
        principal(auth, jwt.encode(_claims(aud="other", iss="idp"), SECRET))


def test_origin_allow_list() -> None:
    open_gw = Authenticator(Settings())
    assert open_gw.origin_allowed("http://anything")
    auth = Authenticator(
        Settings(allowed_origins=("https://*.example.org", "http://localhost:8000"))
    )
    assert auth.origin_allowed("https://ops.example.org")
    assert auth.origin_allowed("http://localhost:8000")
    assert not auth.origin_allowed("https://evil.example.com")
    assert auth.origin_allowed(None)  # not a browser


def test_bearer_token_from_the_header_only() -> None:
    assert bearer_token({"authorization": "Bearer abc"}) == "abc"
    assert bearer_token({}) is None
    assert bearer_token({"authorization": "Basic abc"}) is None


def test_hand_made_tokens_run_commands_where_they_write_unless_told() -> None:
    auth = Authenticator(Settings(jwt_secret=SECRET))
    who = principal(auth, jwt.encode(_claims(write=["tango://*"]), SECRET))
    assert who.may_command("tango://h:1/a/b/c/reset")
    who = principal(auth, jwt.encode(_claims(write=["tango://*"], command=[]), SECRET))
    assert not who.may_command("tango://h:1/a/b/c/reset")
