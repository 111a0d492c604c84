"""``turbocubes autoparser train|extract|eval`` (docs/architecture.md section 3, autoparser).

    turbocubes autoparser train [--out PATH] [--corpus DIR] [--pairs DIR ...] [--from-store] [--folds K]
                                [--iterations N]
    turbocubes autoparser extract FILE|URL [--model PATH] [--html]
    turbocubes autoparser eval DIR [--model PATH] [--validation]

``train`` self-labels the corpus, prints its site-grouped cross-validated figures beside
the in-sample ones, trains on everything (default output: the shipped model,
``cubes/autoparser/model/default.cbm``). ``--from-store`` adds the pipeline's own pairs from
the configured store (``store.url``): hosts with enough pairs are calibrated apart and their
choice (the global model, a threshold, a host model) is written back for the cube. ``extract`` prints
the title, the main text and the images of one page; a URL is fetched through the
SSRF guard (``http.allowlist`` applies). ``eval`` prints 4-token-shingle and token-level P/R/F1 and
pages/s on DIR (see ``evaluate.load_eval_dir`` for the layouts it reads).
Exit codes: 0 done, 1 bad input (a missing file, a refused fetch, a bad model).

Each command imports what it needs when it runs (the settings too), so declaring them costs
``turbocubes --help`` nothing (``tests/unit/cubes/test_cli_imports.py``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from shared.errors import ConfigError

__all__ = ["cmd_eval", "cmd_extract", "cmd_train", "register"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("autoparser", help="train, run and evaluate the HTML article extractor")
    sub = p.add_subparsers(dest="autoparser_command", required=True)

    t = sub.add_parser("train", help="self-label the corpus, train the block classifier, print its figures")
    t.add_argument("--out", type=Path, default=None, help="model file to write (default: the shipped model)")
    t.add_argument("--corpus", type=Path, default=None, help="corpus root (default: ../shared/data/autoparser-train)")
    t.add_argument(
        "--pairs",
        type=Path,
        action="append",
        default=[],
        help="a directory of NAME.html + NAME.txt (+ NAME.json) pairs from the pipeline",
    )
    t.add_argument(
        "--from-store",
        action="store_true",
        help="also learn from the pipeline's pairs in the configured store, and calibrate each host with enough",
    )
    t.add_argument("--folds", type=int, default=None, help="site-grouped cross-validation folds (default 5; 0: none)")
    t.add_argument("--iterations", type=int, default=None, help="boosting iterations (default 300)")
    t.set_defaults(func=cmd_train)

    e = sub.add_parser("extract", help="print the title, main text and images of one page")
    e.add_argument("source", help="an HTML file or an http(s) URL")
    e.add_argument("--model", default=None, help="model file (default: autoparser.model_path)")
    e.add_argument("--url", default="", help="with a FILE: the page's URL (resolves relative links)")
    e.add_argument("--html", action="store_true", help="print the clean body HTML instead of the text")
    e.set_defaults(func=cmd_extract)

    v = sub.add_parser("eval", help="shingle and token P/R/F1 and pages/s against ground truth in DIR")
    v.add_argument("directory", type=Path)
    v.add_argument("--model", default=None, help="model file (default: autoparser.model_path)")
    v.add_argument("--validation", action="store_true", help="only the fixed validation split")
    v.add_argument("--worst", type=int, default=5, help="list the N worst pages")
    v.set_defaults(func=cmd_eval)


def _model_path(args: argparse.Namespace) -> str:
    from shared.config import load_settings

    if args.model:
        return str(args.model)
    return load_settings(args.config).autoparser.model_path


def cmd_train(args: argparse.Namespace) -> int:
    import asyncio

    from cubes.autoparser.corpus import DEFAULT_CORPUS
    from cubes.autoparser.hostfit import HostChoice
    from cubes.autoparser.model import DEFAULT_MODEL
    from cubes.autoparser.train import FOLDS, TrainConfig, train

    config = TrainConfig() if args.iterations is None else TrainConfig(iterations=args.iterations)
    choices: list[HostChoice] = []
    try:
        host_pairs = asyncio.run(_store_pairs(args.config)) if args.from_store else {}
        train(
            args.out or DEFAULT_MODEL,
            args.corpus or DEFAULT_CORPUS,
            args.pairs,
            config,
            folds=FOLDS if args.folds is None else args.folds,
            host_pairs=host_pairs,
            choices=choices,
        )
        if args.from_store:
            asyncio.run(_save_choices(args.config, choices))
    except (FileNotFoundError, ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


async def _store_pairs(config: str | None) -> dict[str, list[Any]]:
    """The pipeline's pairs in the configured store, as training samples by host."""
    from cubes.autoparser.corpus import Sample
    from shared.config import load_settings
    from shared.stores import open_configured

    stores = await open_configured(load_settings(config).store)
    try:
        out: dict[str, list[Any]] = {}
        for host in sorted(await stores.autoparser.pair_hosts()):
            out[host] = [
                Sample(
                    name=f"pair:store/{host}/{i:05d}",
                    html=p.html,
                    reference_text=p.text,
                    title=p.title,
                    url=p.url,
                )
                for i, p in enumerate(await stores.autoparser.pairs(host))
            ]
        return out
    finally:
        await stores.close()


async def _save_choices(config: str | None, choices: list[Any]) -> None:
    """Each calibrated host's choice, for the cube (``knowledge.py`` reads it within minutes)."""
    from shared.config import load_settings
    from shared.stores import open_configured
    from shared.stores.autoparser import HostCalibration

    stores = await open_configured(load_settings(config).store)
    try:
        for c in choices:
            if c.kind == "global":
                await stores.autoparser.drop_calibration(c.host)
            else:
                await stores.autoparser.put_calibration(
                    HostCalibration(c.host, c.kind, threshold=c.threshold, model=c.model, figures=c.figures)
                )
            print(f"host {c.host}: {c.kind} saved")
    finally:
        await stores.close()


async def _fetch(url: str, config: str | None) -> tuple[bytes, str, str | None]:
    from shared.config import load_settings
    from shared.http import Fetcher

    settings = load_settings(config)
    fetcher = Fetcher(settings)
    try:
        result = await fetcher.fetch(url)
    finally:
        await fetcher.close()
    if result.body is None or not result.ok:
        raise OSError(f"fetching {url} failed: {result.status.value} {result.error or ''}".strip())
    return result.body, result.final_url or url, result.headers.get("content-type")


def cmd_extract(args: argparse.Namespace) -> int:
    import asyncio

    from cubes.autoparser.extract import Extractor
    from cubes.autoparser.handler import _charset

    try:
        extractor = Extractor(_model_path(args))
        if args.source.startswith(("http://", "https://")):
            body, url, content_type = asyncio.run(_fetch(args.source, args.config))
            encoding = _charset(content_type)
        else:
            body, url, encoding = Path(args.source).read_bytes(), args.url, None
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    ex = extractor.extract(body, url, encoding)
    print(f"title: {ex.title}")
    print(f"canonical: {ex.canonical_url or '-'}")
    print(f"published: {ex.published_at.isoformat() if ex.published_at else '-'}")
    print(
        f"article: {'yes' if ex.is_article else 'no'}  completeness: {ex.completeness:.2f} "
        f"(against {ex.completeness_region}{': ' + ex.completeness_reason if ex.completeness_reason else ''})  "
        f"blocks: {ex.body_blocks}/{ex.blocks}"
    )
    print(f"images ({len(ex.images)}):")
    for src in ex.images:
        print(f"  {src}")
    print()
    print(ex.body_html if args.html else ex.text)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from cubes.autoparser.evaluate import evaluate, load_eval_dir
    from cubes.autoparser.extract import Extractor

    try:
        extractor = Extractor(_model_path(args))
        samples = load_eval_dir(args.directory, validation_only=args.validation)
    except (ConfigError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    report = evaluate(samples, lambda html, url: extractor.extract(html, url).text)
    t, s = report.token, report.snippet
    print(
        f"pages: {report.pages}  ({report.pages_per_s:.1f} pages/s on one core, CPU time; "
        f"{report.pages_per_wall_s:.1f} by the wall clock)"
    )
    if report.token_pages:
        sh = report.shingle
        print(f"shingles     P {sh.precision:.4f}  R {sh.recall:.4f}  F1 {sh.f1:.4f}  ({report.token_pages} pages)")
        print(f"token-level  P {t.precision:.4f}  R {t.recall:.4f}  F1 {t.f1:.4f}  ({report.token_pages} pages)")
    if report.snippet_pages:
        print(f"snippets     P {s.precision:.4f}  R {s.recall:.4f}  F1 {s.f1:.4f}  ({report.snippet_pages} pages)")
    worst = sorted(report.per_page, key=lambda kv: kv[1].f1)[: args.worst]
    for name, prf in worst:
        print(f"  worst: {name}  F1 {prf.f1:.3f} (P {prf.precision:.3f} R {prf.recall:.3f})")
    return 0
