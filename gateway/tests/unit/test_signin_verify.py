"""Token checks against a provider's published keys, served by a small HTTP server
on loopback (discovery + JWKS, counting reads): every refusal names its reason,
an unknown kid costs one key read at most per interval (shared by concurrent
tokens), a rotated key is accepted on its first token, a removed key stops being
accepted. The real provider (Keycloak) is the system tests' (test_signin_*)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from synoptic_gateway.auth import Authenticator, AuthError
from synoptic_gateway.settings import Settings


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class Provider:
    """Discovery and a JWKS on loopback; ``keys`` may change between reads."""

    def __init__(self) -> None:
        self.keys: dict[str, rsa.RSAPrivateKey] = {"k1": rsa_key()}
        self.jwks_reads = 0
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.endswith("/.well-known/openid-configuration"):
                    body: Any = {"issuer": provider.issuer,
                                 "jwks_uri": f"{provider.issuer}/certs",
                                 "authorization_endpoint": f"{provider.issuer}/auth",
                                 "token_endpoint": f"{provider.issuer}/token"}  # fmt: skip
                elif self.path.endswith("/certs"):
                    provider.jwks_reads += 1
                    body = {"keys": [provider.jwk(kid) for kid in list(provider.keys)]}
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self.server.server_port}/realms/r"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def jwk(self, kid: str) -> dict[str, Any]:
        jwk = RSAAlgorithm.to_jwk(self.keys[kid].public_key(), as_dict=True)
        return {**jwk, "kid": kid, "alg": "RS256", "use": "sig"}

    def token(self, kid: str = "k1", key: Any = None, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": self.issuer, "aud": "synoptic", "sub": "u-1",
                "preferred_username": "otto", "iat": now, "exp": now + 300,
                **claims}  # fmt: skip
        return jwt.encode(body, key or self.keys[kid], "RS256", headers={"kid": kid})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def provider() -> Iterator[Provider]:
    served = Provider()
    yield served
    served.close()


def authenticator(provider: Provider, **settings: Any) -> Authenticator:
    return Authenticator(Settings(oidc_issuer=provider.issuer, **settings))


async def refused(auth: Authenticator, token: str) -> str:
    with pytest.raises(AuthError) as info:
        await auth.principal(token)
    return str(info.value)


async def test_every_bad_token_is_refused_with_its_reason(provider: Provider) -> None:
    auth = authenticator(provider)
    await auth.start()
    try:
        good = await auth.principal(provider.token())
        assert (good.name, good.read, good.write) == ("otto", ("*",), ())
        now = int(time.time())
        other = rsa_key()
        cases = {
            "the token expired": provider.token(exp=now - 60),
            "the token is not valid yet": provider.token(nbf=now + 600),
            "the token is not meant for 'synoptic'": provider.token(aud="account"),
            "was not issued by": provider.token(iss="http://127.0.0.1:1/realms/r"),
            "signature does not verify": provider.token(key=other),  # forged, real kid
            "is not the provider's": provider.token(kid="k-unknown", key=other),
            "unsigned tokens are refused": jwt.encode(
                {"sub": "u-1", "iss": provider.issuer}, None, "none"
            ),
            "not a token": "not-a-jwt",
            "no 'sub' claim": provider.token(sub=None),
        }
        for reason, token in cases.items():
            assert reason in await refused(auth, token), reason
    finally:
        await auth.close()


async def test_an_unknown_kid_costs_one_read_per_interval_shared_by_concurrent_tokens(
    provider: Provider,
) -> None:
    auth = authenticator(provider, jwks_min_interval=3600.0)
    await auth.start()
    try:
        await auth.principal(provider.token())  # keys read once at start
        assert auth.keyset is not None
        before = provider.jwks_reads
        other = rsa_key()
        forged = [provider.token(kid=f"forged-{i}", key=other) for i in range(20)]
        results = await asyncio.gather(
            *(auth.principal(t) for t in forged), return_exceptions=True
        )
        assert all(isinstance(r, AuthError) for r in results)
        # at most the one read that the interval allows (the start's read counts)
        assert provider.jwks_reads - before <= 1
    finally:
        await auth.close()


async def test_a_rotated_key_is_accepted_on_its_first_token_and_a_removed_one_is_not(
    provider: Provider,
) -> None:
    auth = authenticator(provider, jwks_min_interval=0.0)
    await auth.start()
    try:
        old_token = provider.token("k1")
        await auth.principal(old_token)
        provider.keys["k2"] = rsa_key()  # the provider rotates: signs with k2 ...
        del provider.keys["k1"]  # ... and no longer publishes k1
        started = time.perf_counter()
        who = await auth.principal(provider.token("k2"))
        assert who.name == "otto"
        assert time.perf_counter() - started < 5.0
        assert "is not the provider's" in await refused(auth, old_token)
    finally:
        await auth.close()


async def test_keys_held_keep_working_while_the_provider_is_down(
    provider: Provider,
) -> None:
    auth = authenticator(provider, jwks_min_interval=0.0)
    await auth.start()
    try:
        token = provider.token()
        await auth.principal(token)
        provider.close()  # unreachable from now on
        assert (await auth.principal(token)).name == "otto"
        reason = await refused(auth, provider.token(kid="k9", key=rsa_key()))
        assert "is not the provider's" in reason
    finally:
        await auth.close()


async def test_without_keys_the_refusal_says_the_provider_cannot_be_reached() -> None:
    auth = Authenticator(Settings(oidc_issuer="http://127.0.0.1:9/realms/none",
                                  jwks_min_interval=0.0))  # fmt: skip
    await auth.start()
    try:
        token = jwt.encode({"sub": "x"}, rsa_key(), "RS256", headers={"kid": "a"})
        assert "cannot be reached" in await refused(auth, token)
    finally:
        await auth.close()
