"""The problem codes of sites and their owners: ``host.*`` (a source's right to its host), ``conflict.*`` (who
owns a URL) and ``notify.*`` (the owner's own notification endpoints) -- rows of the one table,
``shared/problems/codes.py`` (docs/architecture.md sections 6 and 10).
"""

from __future__ import annotations

from shared.problems.code import ProblemCode

__all__ = ["SITE_ROWS"]

SITE_ROWS: tuple[ProblemCode, ...] = (
    ProblemCode(
        "host.not_verified",
        "error",
        "the feed's or upload's host is not verified for its tenant (any more), or its page is on another origin",
        "Your right covers the origin you proved (scheme, host and port); it was never granted, its proof "
        "lapsed past its grace, or you claimed another origin since: nothing of it is published. Verify the "
        "host again (POST /api/v1/hosts/{host}/verify) or remove the feed.",
    ),
    ProblemCode(
        "host.proof_lapsing",
        "warning",
        "the proof of a right was not found at its re-check: the right ends when its grace runs out",
        "Publish the verification token again (the DNS TXT record, the file or the meta tag in the <head>) "
        "on the claimed origin, then POST /api/v1/hosts/{host}/verify: found again, the right goes on.",
    ),
    ProblemCode(
        "host.turbo_off",
        "warning",
        "Turbo pages are switched off for this host: its pages were removed and nothing is published",
        "Switch them on again (PUT /api/v1/hosts/{host}/turbo, or turbocubes hosts turbo HOST on): the next "
        "fetch of each feed publishes its pages again.",
    ),
    ProblemCode(
        "conflict.outranked",
        "error",
        "another source owns this URL; the item was not published from this one",
        "The page is published from the source named in the message (partner API > Turbo > YML / RSS > "
        "autoparser). Edit it there, or delete it there so this source can take it.",
    ),
    ProblemCode(
        "conflict.other_tenant",
        "error",
        "another tenant's source published this URL; it stays theirs",
        "A page belongs to the tenant whose source published it, while that tenant holds a right on its "
        "origin: publish your own URLs, or ask the other holder to delete the page.",
    ),
    ProblemCode(
        "notify.endpoint_failing",
        "error",
        "a notification could not be delivered to your webhook or e-mail address after every attempt",
        "The message names the endpoint and its last answer: make the webhook answer 2xx within 10 s (check "
        "its URL and that it verifies the signature with the secret it was given), or correct the address; "
        "the console's Send a test tells at once.",
    ),
    ProblemCode(
        "conflict.taken_over",
        "warning",
        "a source of higher priority took this URL over",
        "The page is now published from the source named in the message; this source's version of it "
        "is ignored while that one has it.",
    ),
)
