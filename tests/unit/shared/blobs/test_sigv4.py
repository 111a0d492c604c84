"""shared.blobs.sigv4 signs exactly as botocore does (botocore is the reference signer)."""

from __future__ import annotations

from datetime import UTC, datetime
from unittest import mock
from urllib.parse import quote

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

from shared.blobs.sigv4 import UNSIGNED_PAYLOAD, SigV4Signer

NOW = datetime(2026, 12, 1, 9, 12, 30, tzinfo=UTC)


def botocore_headers(method: str, host: str, path: str, extra: dict[str, str]) -> dict[str, str]:
    url = f"http://{host}{quote(path, safe='/-_.~')}"
    req = AWSRequest(method=method, url=url, headers=dict(extra))
    req.context["client_config"] = Config(s3={"payload_signing_enabled": False})
    with mock.patch("botocore.auth.get_current_datetime", return_value=NOW.replace(tzinfo=None)):
        S3SigV4Auth(Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"), "s3", "eu-west-3").add_auth(
            req
        )
    return dict(req.headers.items())


@pytest.mark.parametrize(
    ("method", "path", "extra"),
    [
        ("PUT", "/media/img/ab/abcdef0123.jpg", {}),
        ("GET", "/media/blobs/feeds/2026/12/01/x.xml", {}),
        ("HEAD", "/media/a key with spaces/ü/+plus&amp=1", {}),
        ("DELETE", "/media/img/~tilde/semi;colon", {}),
        ("PUT", "/media/k", {"x-amz-meta-origin": " partner "}),
    ],
)
def test_signature_equals_botocore(method: str, path: str, extra: dict[str, str]) -> None:
    signer = SigV4Signer("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "eu-west-3")
    ours = signer.headers(method, "127.0.0.1:18333", path, NOW, extra)
    theirs = botocore_headers(method, "127.0.0.1:18333", path, extra)
    assert ours["Authorization"] == theirs["Authorization"]
    assert ours["x-amz-date"] == theirs["X-Amz-Date"] == "20261201T091230Z"
    assert ours["x-amz-content-sha256"] == theirs["X-Amz-Content-SHA256"] == UNSIGNED_PAYLOAD
    assert ours["Host"] == "127.0.0.1:18333"


def test_the_signing_key_follows_the_day() -> None:
    signer = SigV4Signer("AKIDEXAMPLE", "secret", "us-east-1")
    today = signer.headers("GET", "h:1", "/b/k", NOW)["Authorization"]
    tomorrow = signer.headers("GET", "h:1", "/b/k", NOW.replace(day=2))["Authorization"]
    assert "20261201/us-east-1/s3/aws4_request" in today
    assert "20261202/us-east-1/s3/aws4_request" in tomorrow
    # and back: a cached key of the wrong day is never used
    assert signer.headers("GET", "h:1", "/b/k", NOW)["Authorization"] == today
