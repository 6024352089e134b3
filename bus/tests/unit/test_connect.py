"""NATS URLs: several servers, and credentials never logged."""

from __future__ import annotations

from synoptic_bus.connect import redact, server_urls


def test_comma_separated_urls_name_every_cluster_server() -> None:
    assert server_urls("nats://a:4222, nats://b:4222,") == [
        "nats://a:4222",
        "nats://b:4222",
    ]


def test_redact_hides_user_and_password_of_every_url() -> None:
    text = redact("nats://gw:s3cret@nats-0:4222,tls://gw:s3cret@nats-1:4222,nats://c:1")
    assert "s3cret" not in text and "gw" not in text
    assert text == "nats://***@nats-0:4222,tls://***@nats-1:4222,nats://c:1"
