"""A feed's own options: bounded where they enter, secrets sealed, merged like a JSON merge patch, filters."""

from __future__ import annotations

import base64

import pytest

from shared.secretbox import NoKey, SecretBox, Unsealable, new_key
from shared.webmaster.feed_options import (
    MAX_HEADERS,
    FeedFilters,
    FeedOptions,
    OptionsRefused,
    fetch_headers,
    merged_options,
    parse_options,
    seal_options,
)

BOX = SecretBox(new_key())


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"timeout_s": 0.5}, "options.timeout_s"),
        ({"timeout_s": 10_000}, "options.timeout_s"),
        ({"timeout_s": "soon"}, "options.timeout_s"),
        ({"basic_auth": {"username": "a:b", "password": "x"}}, "options.basic_auth.username"),
        ({"basic_auth": {"username": "", "password": "x"}}, "options.basic_auth.username"),
        ({"basic_auth": {"username": "bob", "password": "x" * 5000}}, "options.basic_auth.password"),
        ({"headers": {"Host": "evil.example"}}, "options.headers"),
        ({"headers": {"If-None-Match": "*"}}, "options.headers"),
        ({"headers": {"Authorization": "Bearer x"}}, "options.headers"),
        ({"headers": {"X-Key": "a\r\nSet-Cookie: b"}}, "options.headers"),
        ({"headers": {"Bad Name": "x"}}, "options.headers"),
        ({"headers": {f"X-{i}": "v" for i in range(MAX_HEADERS + 1)}}, "options.headers"),
        ({"filters": {"keep_pattern": "(unclosed"}}, "options.filters.keep_pattern"),
        ({"filters": {"drop_pattern": "x" * 300}}, "options.filters.drop_pattern"),
        ({"filters": {"keep_categories": [" "]}}, "options.filters.keep_categories"),
        ({"filters": {"nope": 1}}, "options.filters.nope"),
        ({"cookies": "x"}, "options.cookies"),
    ],
)
def test_every_option_is_bounded_where_it_enters(raw: dict[str, object], field: str) -> None:
    with pytest.raises(OptionsRefused) as caught:
        parse_options(raw)
    assert field in [f for f, _ in caught.value.problems], caught.value.problems


def test_secrets_are_sealed_and_open_only_with_the_key() -> None:
    options = parse_options(
        {"basic_auth": {"username": "bob", "password": "s3cret"}, "headers": {"X-Api-Key": "key-of-bob"}}
    )
    public, sealed = seal_options(options, BOX)
    assert sealed is not None
    assert "s3cret" not in sealed
    assert "key-of-bob" not in sealed
    assert public.username == "bob"
    assert public.header_names == ("X-Api-Key",)
    assert "s3cret" not in (public.to_json() or "")
    headers = fetch_headers(sealed, BOX)
    assert headers["X-Api-Key"] == "key-of-bob"
    assert base64.b64decode(headers["Authorization"].removeprefix("Basic ")) == b"bob:s3cret"
    with pytest.raises(Unsealable):
        fetch_headers(sealed, SecretBox(new_key()))  # the key was changed since
    with pytest.raises(NoKey):
        seal_options(options, SecretBox(""))


def test_options_merge_like_a_json_merge_patch() -> None:
    first = parse_options({"basic_auth": {"username": "bob", "password": "pw"}, "timeout_s": 30})
    public, sealed = seal_options(first, BOX)
    # the filters change; the password is not sent again and stays
    after = merged_options(public.to_json(), sealed, {"filters": {"drop_categories": ["Ads"]}}, BOX)
    assert after is not None
    assert after.basic_auth is not None
    assert (after.basic_auth.username, after.basic_auth.password, after.timeout_s) == ("bob", "pw", 30.0)
    assert after.filters.drop_categories == ("ads",)
    # a key given as null removes it; null removes every option
    removed = merged_options(public.to_json(), sealed, {"basic_auth": None}, BOX)
    assert removed is not None
    assert removed.basic_auth is None
    assert removed.timeout_s == 30.0
    assert merged_options(public.to_json(), sealed, None, BOX) is None
    with pytest.raises(OptionsRefused):
        merged_options(None, None, ["not", "an", "object"], BOX)


def test_filters_keep_and_drop_by_category_and_pattern() -> None:
    f = FeedFilters.model_validate(
        {"keep_categories": ["News", "Sport"], "drop_categories": ["Sponsored"], "drop_pattern": r"\bpromo\b"}
    )
    assert f.verdict("Election day", "https://x/1", ["news"]).kept
    assert not f.verdict("Election day", "https://x/1", ["Weather"]).kept  # not in keep_categories
    dropped = f.verdict("Election day", "https://x/1", ["News", "Sponsored"])
    assert not dropped.kept
    assert "drop_categories" in dropped.reason  # drop wins over keep
    assert not f.verdict("Big PROMO inside", "https://x/2", ["News"]).kept  # case-blind
    assert FeedFilters().verdict("anything", None, []).kept


def test_a_pattern_that_backtracks_for_ever_is_cut_off_and_keeps_its_item() -> None:
    f = FeedFilters.model_validate({"drop_pattern": r"(a|aa)+$"})
    verdict = f.verdict("a" * 60 + "b", None, [])  # 2^60 ways to try: cut off by the search's own limit
    assert verdict.kept
    assert verdict.too_slow == r"(a|aa)+$"


def test_public_options_round_trip_through_the_row() -> None:
    public = FeedOptions(timeout_s=12.0, username="bob", header_names=("X-Key",))
    assert FeedOptions.from_json(public.to_json()) == public
    assert FeedOptions().to_json() is None
