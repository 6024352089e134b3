"""The demo realm: three people, their groups and roles, and the clients that
sign them in (the web UI, the CLI's device code, scripts' client credentials).

``python -m synoptic_identity.realm`` prints it as Keycloak's realm JSON. The
same groups are what ``screens/roles.toml`` (the demo's role mapping) names.
"""

from __future__ import annotations

import json
import sys
from typing import Any

REALM = "synoptic"
#: the audience every access token of the realm carries (the gateway checks it)
AUDIENCE = "synoptic"
UI_CLIENT = "synoptic-ui"
#: the web UI's client with access tokens of UI_SHORT_LIFETIME seconds (browser
#: tests of renewal)
UI_SHORT_CLIENT = "synoptic-ui-short"
UI_SHORT_LIFETIME = 20
CLI_CLIENT = "synoptic-cli"
SCRIPT_CLIENT = "synoptic-script"
SCRIPT_SECRET = "synoptic-script-secret"  # the demo's; a facility's is its own
TESTS_CLIENT = "synoptic-tests"
#: password-grant clients whose tokens are bad in one way each (system tests)
SHORT_CLIENT = "synoptic-tests-short"  # access tokens live SHORT_LIFETIME seconds
SHORT_LIFETIME = 4
NO_AUDIENCE_CLIENT = "synoptic-tests-noaud"  # no synoptic audience
FUTURE_CLIENT = "synoptic-tests-future"  # not valid before 2100 (nbf)
#: a service account that may manage the realm's keys (tests, benchmarks and the
#: operations guide's key rotation against the demo)
ADMIN_CLIENT = "synoptic-admin"
ADMIN_SECRET = "synoptic-admin-secret"

#: the sign-in pages' theme (identity/theme/synoptic, copied into Keycloak's themes/)
LOGIN_THEME = "synoptic"
#: demo users: name → (first, last, group); each one's password is its name
USERS: dict[str, tuple[str, str, str]] = {
    "viewer": ("Vera", "Viewer", "viewers"),
    "operator": ("Otto", "Operator", "operators"),
    "engineer": ("Enya", "Engineer", "engineers"),
}
#: group → the realm roles it carries (a mapping may name either)
GROUP_ROLES: dict[str, list[str]] = {
    "viewers": ["synoptic-viewer"],
    "operators": ["synoptic-viewer", "synoptic-operator"],
    "engineers": ["synoptic-viewer", "synoptic-operator", "synoptic-engineer"],
}
#: the service account of the script client is an operator
SCRIPT_GROUP = "operators"

_SCOPES = ["profile", "basic", "roles"]


def _mappers() -> list[dict[str, Any]]:
    """Groups (short names) in every token; the synoptic audience in access
    tokens."""
    return [
        {
            "name": "groups",
            "protocol": "openid-connect",
            "protocolMapper": "oidc-group-membership-mapper",
            "config": {
                "claim.name": "groups",
                "full.path": "false",
                "access.token.claim": "true",
                "id.token.claim": "true",
                "userinfo.token.claim": "true",
                "introspection.token.claim": "true",
            },
        },
        {
            "name": "audience",
            "protocol": "openid-connect",
            "protocolMapper": "oidc-audience-mapper",
            "config": {
                "included.custom.audience": AUDIENCE,
                "access.token.claim": "true",
                "id.token.claim": "false",
                "introspection.token.claim": "true",
            },
        },
    ]


def _not_before(unix: int) -> dict[str, Any]:
    """A fixed ``nbf`` claim in access tokens."""
    return {
        "name": "not-before",
        "protocol": "openid-connect",
        "protocolMapper": "oidc-hardcoded-claim-mapper",
        "config": {
            "claim.name": "nbf",
            "claim.value": str(unix),
            "jsonType.label": "long",
            "access.token.claim": "true",
            "id.token.claim": "false",
        },
    }


def _client(client_id: str, name: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "clientId": client_id,
        "name": name,
        "publicClient": True,
        "standardFlowEnabled": False,
        "implicitFlowEnabled": False,
        "directAccessGrantsEnabled": False,
        "defaultClientScopes": _SCOPES,
        "protocolMappers": _mappers(),
    }
    return base | fields


def demo_realm() -> dict[str, Any]:
    """The realm as Keycloak imports it."""
    users: list[dict[str, Any]] = [
        {
            "username": name,
            "enabled": True,
            "firstName": first,
            "lastName": last,
            "email": f"{name}@synoptic.invalid",
            "emailVerified": True,
            "credentials": [{"type": "password", "value": name, "temporary": False}],
            "groups": [f"/{group}"],
        }
        for name, (first, last, group) in USERS.items()
    ]
    users.append(
        {
            "username": f"service-account-{SCRIPT_CLIENT}",
            "enabled": True,
            "serviceAccountClientId": SCRIPT_CLIENT,
            "groups": [f"/{SCRIPT_GROUP}"],
        }
    )
    users.append(
        {
            "username": f"service-account-{ADMIN_CLIENT}",
            "enabled": True,
            "serviceAccountClientId": ADMIN_CLIENT,
            "clientRoles": {"realm-management": ["manage-realm", "view-realm"]},
        }
    )
    roles = sorted({role for names in GROUP_ROLES.values() for role in names})
    return {
        "id": REALM,
        "realm": REALM,
        "displayName": "Synoptic demo",
        "enabled": True,
        "sslRequired": "none",
        "registrationAllowed": False,
        "accessTokenLifespan": 300,
        "ssoSessionIdleTimeout": 1800,
        "ssoSessionMaxLifespan": 36000,
        # the demo's users sign in often: a cheaper hash than the default
        "passwordPolicy": "hashAlgorithm(pbkdf2-sha256) and hashIterations(27500)",
        # Keycloak's templates with one small stylesheet (identity/theme, installed
        # by `make idp`): no 1.6 MB of PatternFly CSS, web fonts or background image
        # between the click on Sign in and the form
        "loginTheme": LOGIN_THEME,
        "roles": {"realm": [{"name": role} for role in roles]},
        "groups": [
            {"name": group, "realmRoles": names} for group, names in GROUP_ROLES.items()
        ],
        "users": users,
        "clients": [
            _client(
                UI_CLIENT,
                "Synoptic web UI",
                standardFlowEnabled=True,
                # loopback addresses on any port (RFC 8252): the demo and tests;
                # the browser fetches tokens from any such origin (a facility's
                # client names its UI's origin instead)
                redirectUris=["http://127.0.0.1/*", "http://localhost/*"],
                webOrigins=["*"],
                attributes={
                    "pkce.code.challenge.method": "S256",
                    "post.logout.redirect.uris": "+",
                },
            ),
            _client(
                UI_SHORT_CLIENT,
                "Synoptic web UI, tokens of seconds (tests of renewal)",
                standardFlowEnabled=True,
                redirectUris=["http://127.0.0.1/*", "http://localhost/*"],
                webOrigins=["*"],
                attributes={
                    "pkce.code.challenge.method": "S256",
                    "post.logout.redirect.uris": "+",
                    "access.token.lifespan": str(UI_SHORT_LIFETIME),
                },
            ),
            _client(
                CLI_CLIENT,
                "Synoptic CLI (device code)",
                attributes={"oauth2.device.authorization.grant.enabled": "true"},
            ),
            _client(
                SCRIPT_CLIENT,
                "Synoptic scripts and services (client credentials)",
                publicClient=False,
                secret=SCRIPT_SECRET,
                serviceAccountsEnabled=True,
            ),
            _client(
                ADMIN_CLIENT,
                "Key rotation on the demo realm (tests, benchmarks)",
                publicClient=False,
                secret=ADMIN_SECRET,
                serviceAccountsEnabled=True,
                protocolMappers=[],
            ),
            _client(
                TESTS_CLIENT,
                "Password grant for tests and `synoptic auth explain --user`",
                directAccessGrantsEnabled=True,
            ),
            _client(
                SHORT_CLIENT,
                "Tests: access tokens that expire within seconds",
                directAccessGrantsEnabled=True,
                attributes={"access.token.lifespan": str(SHORT_LIFETIME)},
            ),
            _client(
                NO_AUDIENCE_CLIENT,
                "Tests: access tokens for another audience",
                directAccessGrantsEnabled=True,
                protocolMappers=_mappers()[:1],
            ),
            _client(
                FUTURE_CLIENT,
                "Tests: access tokens not valid before 2100",
                directAccessGrantsEnabled=True,
                protocolMappers=[*_mappers(), _not_before(4102444800)],
            ),
        ],
    }


#: a second realm (another issuer, other keys) whose tokens the gateway refuses
OTHER_REALM = "elsewhere"
OTHER_CLIENT = "elsewhere-script"
OTHER_SECRET = "elsewhere-script-secret"


def other_realm() -> dict[str, Any]:
    """A realm the demo gateway does not trust: tokens of another issuer that
    name the synoptic audience (the tests' wrong-issuer case)."""
    return {
        "id": OTHER_REALM,
        "realm": OTHER_REALM,
        "enabled": True,
        "sslRequired": "none",
        "users": [
            {
                "username": f"service-account-{OTHER_CLIENT}",
                "enabled": True,
                "serviceAccountClientId": OTHER_CLIENT,
            }
        ],
        "clients": [
            _client(
                OTHER_CLIENT,
                "Tokens of an issuer the gateway does not trust",
                publicClient=False,
                secret=OTHER_SECRET,
                serviceAccountsEnabled=True,
            )
        ],
    }


def realms() -> list[dict[str, Any]]:
    """Every realm of the provider's database."""
    return [demo_realm(), other_realm()]


def main() -> None:
    json.dump(realms(), sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
