"""The wordstat attacks matrix: no sequence of requests reveals a count under the privacy threshold
(docs/architecture.md section 6; the scheme and why each attack fails: cubes/wordstat/README.md).

Two worlds are counted on each engine (SQLite, PostgreSQL) with the cube's privacy (threshold 5, noise 5)
and the same offsets for the same cells: the public searches alone, and the public searches plus a
**secret** -- a few searches that make a cell under the threshold (a rare query of its own, a common
query's rare region, device or month, two rare queries for a union, a homonym, a host's rare query). For
each secret the attacker asks everything the threshold was subtracted away with before: each word, each
word less another (``w -x``), the pairs, the whole query, a phrase, word order, a form, unions of the
secret's words with each other and with a word never searched, over 1, 3 and 24 months, narrowed to the
secret's region and device -- the answer as the API gives it (``frequency_json``: total, 24 months, the
regions' and devices' split, the similar queries) and the host's queries for a host secret. A case holds
when every answer is the same in both worlds: the secret changes nothing anyone can read.

Padding is the other family: one client searching a guessed query many times a day adds one search; and
searches from many clients, added one by one until the query shows, show the same sequence of answers
for a query searched once before (offset 0) as for one searched three times (offset 2), or never.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from cubes.wordstat.handler import counted
from shared.messages import Device, SearchQueryEvent
from shared.stores import Stores, open_stores
from shared.stores.wordstat import CountedSearch, Privacy
from shared.wordstat import frequency as frequency_module
from shared.wordstat.clients import client_key
from shared.wordstat.frequency import frequency, frequency_json
from shared.wordstat.hosts import host_queries
from shared.wordstat.lemmas import normalize_query
from shared.wordstat.operators import parse
from tests.pgschema import fresh_schema
from tests.unit.security.conftest import Matrix
from tests.unit.shared.wordstat.test_operators import SEARCHES

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
THRESHOLD = 5
HOST = "a.partner.test"


def _offset(cell: tuple[object, ...]) -> int:
    """Each cell's offset, the same in both worlds (the store draws it from ``secrets`` otherwise)."""
    return int(hashlib.sha256(repr(cell).encode()).hexdigest(), 16) % 6


PRIVACY = Privacy(threshold=THRESHOLD, noise=5, draw=_offset)


def _events(
    query: str,
    n: int,
    *,
    at: datetime = NOW,
    region: str = "moscow",
    device: Device = Device.desktop,
    hosts: Sequence[str] = (),
    clients: Sequence[str] | None = None,
) -> list[CountedSearch]:
    return [
        counted(
            SearchQueryEvent(
                event_id=uuid.uuid4().hex,
                query=normalize_query(query),
                at=at,
                region=region,
                device=device,
                hosts=list(hosts),
                client=clients[i] if clients else None,
            )
        )
        for i in range(n)
    ]


def _public() -> list[CountedSearch]:
    """The searches everyone's answers are made of: the operators' hand-count corpus, this month in two
    regions and devices, and two months back; a host's common queries."""
    out: list[CountedSearch] = []
    for q, n in SEARCHES.items():
        out += _events(q, 2 * n) + _events(q, n, region="spb", device=Device.mobile)
        out += _events(q, n, at=NOW - timedelta(days=62))
    out += _events("ремонт мостов москва", 9, hosts=[HOST]) + _events("мосты", 12, hosts=[HOST, "b.partner.test"])
    return out


@dataclass(frozen=True)
class Secret:
    name: str
    searches: Callable[[], list[CountedSearch]]
    #: the attacker's queries beyond those made of the secret's own words
    extra: tuple[str, ...] = ()
    region: str = "moscow"
    device: str = "desktop"
    host: str | None = None
    words: tuple[str, ...] = field(default=())


SECRETS = (
    Secret(
        "a rare query of its own",
        lambda: _events("купить слона с доставкой", 3),
        ("купить слона", "слона -купить", '"купить слона"', "!доставкой", "купить слона -!доставкой"),
        words=("купить", "слона", "доставкой"),
    ),
    Secret(
        "a common query's rare region",
        lambda: _events("купить слона", 2, region="ekb"),
        ("купить слона -дешево", "(купить|продать) слона"),
        region="ekb",
        words=("купить", "слона"),
    ),
    Secret(
        "a common query's rare device",
        lambda: _events("работа на дому", 1, device=Device.tablet),
        ("работа -дома", '"работа на дому"', "[работа дому]", "работа +на дому"),
        device="tablet",
        words=("работа", "дому"),
    ),
    Secret(
        "a common query's rare month",
        lambda: _events("билеты из москвы в париж", 3, at=NOW - timedelta(days=150)),
        ("[москвы париж]", "билеты -парижа"),
        words=("билеты", "москвы", "париж"),
    ),
    Secret(
        "two rare queries, one union",
        lambda: _events("иван петров", 3) + _events("петр иванов", 4, region="spb"),
        ("(иван|петр)", "(петров|иванов)", "иван|петр", "(иван петров|петр иванов)", "петров -иван"),
        words=("иван", "петров", "петр", "иванов"),
    ),
    Secret(
        "a homonym's rare query",
        lambda: _events("стали сильнее", 2) + _events("сталь прочнее", 4, device=Device.mobile),
        ("стали", "стать", "сталь -цена", "стали -лучше", "(сталь|стать) -врачом"),
        words=("стали", "сильнее", "сталь", "прочнее"),
    ),
    Secret(
        "a host's rare query",
        lambda: _events("ремонт мостов дешево", 4, hosts=[HOST]),
        ("ремонт мостов москва", "мосты", "ремонт -москва"),
        host=HOST,
        words=("ремонт", "мостов", "дешево"),
    ),
    Secret(
        "an English rare query",
        lambda: _events("buy cheap elephant", 2),
        ("elephant", "buy elephant -cheap", "(buy|sell) elephant"),
        words=("buy", "cheap", "elephant"),
    ),
)


def _attacks(s: Secret) -> list[str]:
    """Every query the attacker asks about ``s``: its words alone, in pairs, each less each other, unions."""
    words = list(s.words)
    out = [*words, " ".join(words), f'"{" ".join(words)}"', f"[{' '.join(words)}]", *s.extra]
    for w in words:
        out.append(f"({w}|зюзябрик)")  # a union with a word never searched: another spelling of w
        for x in words:
            if x != w:
                out += [f"{w} -{x}", f"{w} {x}", f"({w}|{x})"]
    return list(dict.fromkeys(out))


def _params(s: Secret) -> list[dict[str, Any]]:
    return [
        {"period_months": 1},
        {"period_months": 3},
        {"period_months": 24},
        {"period_months": 24, "region": s.region},
        {"period_months": 1, "device": s.device},
    ]


async def _answer(stores: Stores, query: str, **params: Any) -> dict[str, object]:
    """What the API answers (``cubes/api/wordstat.py``: ``frequency_json`` of ``frequency``)."""
    f = await frequency(stores.wordstat, parse(query), now=NOW, threshold=THRESHOLD, **params)
    return frequency_json(f, threshold=THRESHOLD, period_months=params["period_months"])


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def worlds(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Callable[[str], Any]]:
    """``open(name)``: a new store on the engine, opened and closed with the test."""
    opened: list[Stores] = []
    schemas: list[Any] = []

    async def open_world(name: str) -> Stores:
        if request.param == "sqlite":
            url = f"sqlite:///{tmp_path}/{name}.db"
        else:
            schema = fresh_schema(request.getfixturevalue("postgres_url"))
            url = await schema.__aenter__()
            schemas.append(schema)
        stores = await open_stores(url)
        opened.append(stores)
        return stores

    yield open_world
    for stores in opened:
        await stores.close()
    for schema in schemas:
        await schema.__aexit__(None, None, None)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("secret", SECRETS, ids=[s.name for s in SECRETS])
async def test_a_secret_changes_no_answer(
    secret: Secret, worlds: Callable[[str], Any], matrix: Callable[[str], Matrix]
) -> None:
    report = matrix("wordstat attacks")
    public = _public()
    without, with_secret = await worlds("without"), await worlds("with")
    await without.wordstat.count(public, now=NOW, privacy=PRIVACY)
    await with_secret.wordstat.count(public, now=NOW, privacy=PRIVACY)
    assert await with_secret.wordstat.count(secret.searches(), now=NOW, privacy=PRIVACY) > 0
    differ: list[str] = []
    for query in _attacks(secret):
        for params in _params(secret):
            same = await _answer(without, query, **params) == await _answer(with_secret, query, **params)
            kind = "splits" if "region" in params or "device" in params else "differencing and unions"
            label = f"{secret.name}: {query} {params}"
            report.case(label, same, kind=kind)
            if not same:
                differ.append(label)
    if secret.host is not None:
        for months in (1, 3, 24):
            a = await host_queries(without.wordstat, secret.host, now=NOW, months=months, threshold=THRESHOLD)
            b = await host_queries(with_secret.wordstat, secret.host, now=NOW, months=months, threshold=THRESHOLD)
            report.case(f"{secret.name}: host queries, {months} months", a == b, kind="host queries")
            if a != b:
                differ.append(f"host queries {months}: {a} != {b}")
    assert differ == [], "\n".join(differ[:20])


def _guessed(offsets: dict[str, int]) -> Privacy:
    """The cube's privacy with a chosen offset for the guessed query's cell."""

    def draw(cell: tuple[object, ...]) -> int:
        return offsets.get(str(cell[0]), _offset(cell))

    return Privacy(threshold=THRESHOLD, noise=5, draw=draw)


GUESS = "иван петров диагноз"


async def _padded(stores: Stores, before: int, offset: int, pads: int) -> list[dict[str, object]]:
    """The attacker's answers after each of ``pads`` searches of ``GUESS`` from distinct clients, the query
    searched ``before`` times first (by others) and its cell's offset ``offset``."""
    privacy = _guessed({normalize_query(GUESS): offset})
    await stores.wordstat.count(_public(), now=NOW, privacy=privacy)
    if before:
        await stores.wordstat.count(_events(GUESS, before), now=NOW, privacy=privacy)
    seen = []
    for i in range(pads):
        pad = _events(GUESS, 1, clients=[client_key(b"attacker", f"10.0.0.{i}", normalize_query(GUESS))])
        assert await stores.wordstat.count(pad, now=NOW, privacy=privacy) == 1
        seen.append(await _answer(stores, GUESS, period_months=1))
    return seen


async def test_padding_from_one_client_adds_one_search_a_day(
    worlds: Callable[[str], Any], matrix: Callable[[str], Matrix]
) -> None:
    """Searching the guessed query 50 times from one address counts once: a query searched 3 times stays
    hidden (3 + 1 < 5), and every answer is the one of a query never searched before the attacker."""
    report = matrix("wordstat attacks")
    answers = []
    for before in (0, 3):
        stores = await worlds(f"one-client-{before}")
        await stores.wordstat.count(_public(), now=NOW, privacy=PRIVACY)
        if before:
            await stores.wordstat.count(_events(GUESS, before), now=NOW, privacy=PRIVACY)
        key = client_key(b"day key", "10.0.0.1", normalize_query(GUESS))
        counted_n = await stores.wordstat.count(_events(GUESS, 50, clients=[key] * 50), now=NOW, privacy=PRIVACY)
        report.case(f"one client's 50 searches with {before} before count once", counted_n == 1, kind="padding")
        assert counted_n == 1
        again = await stores.wordstat.count(_events(GUESS, 5, clients=[key] * 5), now=NOW, privacy=PRIVACY)
        report.case(f"the same client again that day, {before} before: nothing", again == 0, kind="padding")
        assert again == 0
        answers.append(await _answer(stores, GUESS, period_months=1))
    report.case("one client's padding tells 0 from 3", answers[0] == answers[1], kind="padding")
    assert answers[0] == answers[1]
    assert answers[1]["total"] == {"count": None, "display": "< 5"}


@pytest.mark.parametrize(
    ("world", "other"),
    [((1, 0), (3, 2)), ((0, 1), (2, 3)), ((4, 3), (1, 0))],
    ids=["1 or 3 searches", "never or 2 searches", "4 or 1 searches"],
)
async def test_padding_from_many_clients_tells_the_count_less_a_secret_offset_only(
    world: tuple[int, int], other: tuple[int, int], worlds: Callable[[str], Any], matrix: Callable[[str], Matrix]
) -> None:
    """Distinct clients add the guessed query's searches one by one until it shows. When it shows and what
    it shows depend on the count less the cell's secret offset only: a query searched once before (offset 0)
    and one searched three times (offset 2) give the attacker the same 12 answers, as do a query never
    searched (offset 1) and one searched twice (offset 3): the count is never told, nor whether it was 0."""
    report = matrix("wordstat attacks")
    a = await _padded(await worlds("pad-a"), *world, pads=12)
    b = await _padded(await worlds("pad-b"), *other, pads=12)
    report.case(f"padding: {world} and {other} answer alike", a == b, kind="padding")
    assert a == b
    shown = [x["total"]["count"] for x in a]  # type: ignore[index]
    assert shown[0] is None
    assert shown[-1] is not None


async def test_hidden_queries_are_not_counted_by_the_lower_bound_flag(
    worlds: Callable[[str], Any], matrix: Callable[[str], Matrix], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A phrase's queries are read up to ``VERIFY_LIMIT`` and the answer says "a lower bound" past it. The
    attacker makes queries of the phrase's words, one search each (hidden), up to the limit less one: a
    rare query of the same words would then flip the flag, telling it was searched. Hidden queries count
    nothing, so they make no bound."""
    report = matrix("wordstat attacks")
    monkeypatch.setattr(frequency_module, "VERIFY_LIMIT", 4)
    answers = []
    for secret in (False, True):
        stores = await worlds(f"bound-{secret}")
        await stores.wordstat.count(_public(), now=NOW, privacy=PRIVACY)
        made = [f"зебра {w}" for w in ("альфа", "бета", "гамма")]  # the attacker's, one search each
        await stores.wordstat.count([s for q in made for s in _events(q, 1)], now=NOW, privacy=PRIVACY)
        if secret:
            await stores.wordstat.count(_events("зебра диагноз", 2), now=NOW, privacy=PRIVACY)
        answers.append(await _answer(stores, "[зебра]", period_months=1))
    same = answers[0] == answers[1]
    report.case("a lower bound made of hidden queries", same, kind="differencing and unions")
    assert same, answers
