"""The demo's provider as installed by ``make idp``: started from the template on a
free port, its tokens carry what the gateway needs (groups, realm roles, the
synoptic audience, the user's name), services sign in by client credentials, keys
rotate through the admin API, and the second realm is another issuer."""

from __future__ import annotations

import json
import urllib.request

import jwt
import pytest

from synoptic_identity.admin import (
    ProviderError,
    RealmKeys,
    client_token,
    password_token,
    refresh,
)
from synoptic_identity.keycloak import KeycloakServer
from synoptic_identity.realm import (
    OTHER_CLIENT,
    OTHER_REALM,
    OTHER_SECRET,
    SHORT_CLIENT,
    SHORT_LIFETIME,
)

pytestmark = [pytest.mark.system, pytest.mark.timeout(900)]


def claims(token: str) -> dict:
    return jwt.decode(token, options={"verify_signature": False})


def discovery(issuer: str) -> dict:
    with urllib.request.urlopen(f"{issuer}/.well-known/openid-configuration") as r:
        return json.load(r)


def test_the_demo_users_tokens_carry_groups_roles_audience_and_name(
    keycloak: KeycloakServer,
) -> None:
    doc = discovery(keycloak.issuer)
    assert doc["issuer"] == keycloak.issuer
    assert "S256" in doc["code_challenge_methods_supported"]
    assert doc["device_authorization_endpoint"]
    expected = {"viewer": ("viewers", {"synoptic-viewer"}),
                "operator": ("operators", {"synoptic-operator"}),
                "engineer": ("engineers", {"synoptic-engineer"})}  # fmt: skip
    for user, (group, roles) in expected.items():
        tokens = password_token(keycloak.issuer, user)
        access = claims(tokens["access_token"])
        assert access["iss"] == keycloak.issuer
        assert access["preferred_username"] == user
        assert access["groups"] == [group]
        assert roles <= set(access["realm_access"]["roles"])
        assert "synoptic" in ([access["aud"]] if isinstance(access["aud"], str)
                              else access["aud"])  # fmt: skip
        assert jwt.get_unverified_header(tokens["access_token"])["kid"]
        renewed = refresh(keycloak.issuer, tokens["refresh_token"])
        assert claims(renewed["access_token"])["sub"] == access["sub"]
    with pytest.raises(ProviderError) as info:
        password_token(keycloak.issuer, "viewer", "wrong")
    assert info.value.status == 400 and "invalid_grant" in info.value.body


def test_a_service_signs_in_with_client_credentials(keycloak: KeycloakServer) -> None:
    access = claims(client_token(keycloak.issuer)["access_token"])
    assert access["azp"] == "synoptic-script" and access["groups"] == ["operators"]
    short = claims(password_token(keycloak.issuer, "viewer", client=SHORT_CLIENT)
                   ["access_token"])  # fmt: skip
    assert short["exp"] - short["iat"] == SHORT_LIFETIME


def test_keys_rotate_and_the_old_one_leaves_the_jwks(keycloak: KeycloakServer) -> None:
    keys = RealmKeys(keycloak.url)
    new, old = keys.rotate("rotated-in-test")
    assert new["kid"] != old["kid"]
    jwks_uri = discovery(keycloak.issuer)["jwks_uri"]
    with urllib.request.urlopen(jwks_uri) as r:
        published = {k["kid"] for k in json.load(r)["keys"]}
    assert new["kid"] in published and old["kid"] not in published
    token = password_token(keycloak.issuer, "viewer")["access_token"]
    assert jwt.get_unverified_header(token)["kid"] == new["kid"]


def test_the_other_realm_is_another_issuer(keycloak: KeycloakServer) -> None:
    other = f"{keycloak.url}/realms/{OTHER_REALM}"
    access = claims(client_token(other, OTHER_CLIENT, OTHER_SECRET)["access_token"])
    assert access["iss"] == other != keycloak.issuer
