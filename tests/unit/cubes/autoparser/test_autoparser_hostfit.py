"""Self-training from the pipeline's pairs: `turbocubes autoparser train --from-store`, globally and per host."""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cubes.autoparser.commands import cmd_train
from cubes.autoparser.corpus import Sample
from cubes.autoparser.hostfit import MIN_GAIN, MIN_HOST_PAIRS, calibrate
from cubes.autoparser.model import load_model
from shared.stores import open_stores
from shared.stores.autoparser import Pair
from tests.unit.cubes.autoparser.hard_pages import host_pages

HOST = "ledger.example"


def _title(html: str) -> str:
    return html.split("<h1>", 1)[1].split("</h1>", 1)[0]


def _samples(n: int) -> list[Sample]:
    return [
        Sample(
            name=f"pair:store/{HOST}/{i:05d}",
            html=html.encode(),
            reference_text="\n".join(paras),
            title=_title(html),
            url=url,
        )
        for i, (url, html, paras) in enumerate(host_pages(n))
    ]


def test_calibrate_measures_every_candidate_on_the_hosts_unseen_pages() -> None:
    choice = calibrate(HOST, _samples(MIN_HOST_PAIRS), load_model().model, log=lambda _: None)
    figures = choice.figures
    assert figures["pages"] == MIN_HOST_PAIRS
    assert {"global", "threshold", "model"} <= figures.keys()
    assert choice.kind in ("global", "threshold", "model")
    if choice.kind != "global":  # it is chosen only when it validates better by the margin
        assert figures[choice.kind]["f1"] >= figures["global"]["f1"] + MIN_GAIN
    if choice.kind == "threshold":
        assert choice.threshold is not None
    if choice.kind == "model":
        assert choice.model.startswith(b"CBM")


def test_a_host_with_few_pairs_keeps_the_global_model() -> None:
    choice = calibrate(HOST, _samples(MIN_HOST_PAIRS - 1), load_model().model, log=lambda _: None)
    assert choice.kind == "global"
    assert choice.figures["why"] == "too few pairs"


def test_train_from_the_store_learns_from_the_pairs_and_writes_the_hosts_choice(tmp_path: Path) -> None:
    store_url = f"sqlite:///{tmp_path}/store.db"
    config = tmp_path / "turbocubes.toml"
    config.write_text(f'[store]\nurl = "{store_url}"\n')
    t0 = datetime(2024, 5, 1, tzinfo=UTC)

    async def fill() -> None:
        stores = await open_stores(store_url)
        try:
            for i, (url, html, paras) in enumerate(host_pages(MIN_HOST_PAIRS)):
                text = "\n".join(paras)
                pair = Pair(HOST, url, html.encode(), text, _title(html), t0 + timedelta(seconds=i))
                await stores.autoparser.add_pair(pair)
            # a second host with too few pairs to calibrate: its pairs train the global model
            for url, html, paras in host_pages(4):
                other = url.replace(HOST, "small.example")
                pair = Pair("small.example", other, html.encode(), "\n".join(paras), _title(html))
                await stores.autoparser.add_pair(pair)
        finally:
            await stores.close()

    asyncio.run(fill())
    out = tmp_path / "model.cbm"
    args = argparse.Namespace(
        out=out,
        corpus=tmp_path / "no-corpus",
        pairs=[],
        from_store=True,
        folds=0,
        iterations=40,
        config=str(config),
    )
    assert cmd_train(args) == 0
    assert load_model(out).path == out  # a valid model of this version and feature set

    async def read() -> tuple[object, object]:
        stores = await open_stores(store_url)
        try:
            return await stores.autoparser.get_calibration(HOST), await stores.autoparser.get_calibration(
                "small.example"
            )
        finally:
            await stores.close()

    calibration, small = asyncio.run(read())
    assert small is None  # too few pairs: served by the global model
    metrics = (out.with_suffix(".metrics.json")).read_text()
    assert f'"{HOST}"' in metrics  # the host's figures, whatever it chose
    assert '"pages": 4' in metrics  # the global model learnt from the small host's pairs only
    if calibration is not None:
        assert calibration.kind in ("threshold", "model")  # type: ignore[attr-defined]
