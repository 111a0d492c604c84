"""AWS Signature Version 4 for the S3 data plane (docs/architecture.md section 4, "blobs / CDN").

The S3 blob store sends its object requests (PUT, GET, HEAD, DELETE) over aiohttp and signs them
here; boto3 keeps the control plane (buckets). Why not botocore's own signer: on this machine
``S3SigV4Auth.add_auth`` costs about 180 µs a request (its ``AWSRequest`` building, header
canonicalization and urllib quoting, all generic), which was 40 % of a whole PUT's CPU once the
transport was aiohttp; this one costs about 7 µs. It does only what the data plane needs:

* the payload is ``UNSIGNED-PAYLOAD`` (allowed by S3 over any transport; the bytes are keyed by
  their own sha256 and TLS, where used, guards them in flight, so hashing every body again would buy
  nothing but CPU);
* the signed headers are ``host``, ``x-amz-content-sha256`` and ``x-amz-date``, plus any
  ``x-amz-*`` header the caller adds;
* there is no query string (object keys travel in the path).

The signing key depends only on the secret, the date and the region, so it is derived once a day.
``tests/unit/shared/blobs/test_sigv4.py`` checks every signature against botocore's signer, which
stays the reference.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime
from urllib.parse import quote

__all__ = ["UNSIGNED_PAYLOAD", "SigV4Signer"]

UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
_ALGORITHM = "AWS4-HMAC-SHA256"


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


class SigV4Signer:
    """Signs S3 requests for one identity and region."""

    def __init__(self, access_key: str, secret_key: str, region: str, service: str = "s3") -> None:
        self.access_key = access_key
        self._secret = secret_key
        self.region = region
        self.service = service
        self._day = ""
        self._key = b""

    def _signing_key(self, day: str) -> bytes:
        if day != self._day:  # once a day (and once per process): four HMACs
            key = _hmac(("AWS4" + self._secret).encode(), day)
            for part in (self.region, self.service, "aws4_request"):
                key = _hmac(key, part)
            self._day, self._key = day, key
        return self._key

    def headers(
        self, method: str, host: str, path: str, now: datetime, extra: dict[str, str] | None = None
    ) -> dict[str, str]:
        """The headers that sign ``method`` on ``path`` (already the request's path, not yet quoted).

        ``host`` is the Host header exactly as sent (``127.0.0.1:18333``); ``now`` is UTC. ``extra``
        may add ``x-amz-*`` headers, which are signed too; other headers (Content-Type,
        Cache-Control) are sent unsigned, as S3 allows.
        """
        stamp = now.strftime("%Y%m%dT%H%M%SZ")
        day = stamp[:8]
        amz = {"host": host, "x-amz-content-sha256": UNSIGNED_PAYLOAD, "x-amz-date": stamp}
        for name, value in (extra or {}).items():
            amz[name.lower()] = value.strip()
        names = sorted(amz)
        signed = ";".join(names)
        canonical_headers = "".join(f"{n}:{amz[n]}\n" for n in names)
        # S3 encodes each path segment once (RFC 3986 unreserved characters stay), "/" kept
        canonical = f"{method}\n{quote(path, safe='/-_.~')}\n\n{canonical_headers}\n{signed}\n{UNSIGNED_PAYLOAD}"
        scope = f"{day}/{self.region}/{self.service}/aws4_request"
        to_sign = f"{_ALGORITHM}\n{stamp}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
        signature = hmac.new(self._signing_key(day), to_sign.encode(), hashlib.sha256).hexdigest()
        out = {name: value for name, value in amz.items() if name != "host"}
        out["Host"] = host  # sent exactly as signed (aiohttp keeps a Host header it is given)
        out["Authorization"] = (
            f"{_ALGORITHM} Credential={self.access_key}/{scope}, SignedHeaders={signed}, Signature={signature}"
        )
        return out
