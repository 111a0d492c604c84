"""``Settings``: every section of ``turbocubes.toml``, frozen, read once (docs/architecture.md section 7)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.config.section import Section, config_error
from shared.config.sections import (
    ApiConfig,
    AutoparserConfig,
    BlobsConfig,
    BusConfig,
    CdnConfig,
    CrawlerConfig,
    DelayConfig,
    FrontendConfig,
    HttpConfig,
    IndexerConfig,
    KvwriterConfig,
    MediaConfig,
    NotifyConfig,
    ParserConfig,
    RuntimeConfig,
    SchedulerConfig,
    SearchConfig,
    SecretsConfig,
    StoreConfig,
    WordstatConfig,
)
from shared.errors import ConfigError

__all__ = ["Settings", "section_models"]


class Settings(BaseModel):
    """The whole configuration; the order of the fields is the order of ``turbocubes.example.toml``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bus: BusConfig = Field(default_factory=BusConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    cdn: CdnConfig = Field(default_factory=CdnConfig)
    blobs: BlobsConfig = Field(default_factory=BlobsConfig)
    runtime: RuntimeConfig = Field(default_factory=RuntimeConfig)
    http: HttpConfig = Field(default_factory=HttpConfig)
    crawler: CrawlerConfig = Field(default_factory=CrawlerConfig)
    scheduler: SchedulerConfig = Field(default_factory=SchedulerConfig)
    parser: ParserConfig = Field(default_factory=ParserConfig)
    media: MediaConfig = Field(default_factory=MediaConfig)
    delay: DelayConfig = Field(default_factory=DelayConfig)
    kvwriter: KvwriterConfig = Field(default_factory=KvwriterConfig)
    indexer: IndexerConfig = Field(default_factory=IndexerConfig)
    api: ApiConfig = Field(default_factory=ApiConfig)
    frontend: FrontendConfig = Field(default_factory=FrontendConfig)
    autoparser: AutoparserConfig = Field(default_factory=AutoparserConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    wordstat: WordstatConfig = Field(default_factory=WordstatConfig)
    secrets: SecretsConfig = Field(default_factory=SecretsConfig)
    notify: NotifyConfig = Field(default_factory=NotifyConfig)

    def replace(self, **sections: dict[str, Any]) -> Settings:
        """A copy with some keys changed: ``settings.replace(bus={"url": "kafka://..."})``.

        For code and tests that adjust settings already read (the demo's allowlist, a worker's
        port). Each changed section is validated again, as a file's would be: a value out of its
        bounds, an unknown section or a misspelt key is a ``ConfigError`` naming it, never a copy
        that holds nonsense or a silent no-op.
        """
        out: dict[str, Any] = {}
        for name, changes in sections.items():
            if name not in type(self).model_fields:
                raise ConfigError(name, changes, "a known section", sorted(type(self).model_fields))
            current = getattr(self, name)
            model = type(current)
            try:
                out[name] = model.model_validate({**dict(current), **changes})
            except ValidationError as exc:
                raise config_error(name, model, exc, changes, {}) from None
        return self.model_copy(update=out)


def section_models() -> dict[str, type[Section]]:
    """Each section's name and model, in the order of ``Settings``."""
    out: dict[str, type[Section]] = {}
    for name, f in Settings.model_fields.items():
        model = f.annotation
        if not (isinstance(model, type) and issubclass(model, Section)):
            raise TypeError(f"Settings.{name} is not a Section")
        out[name] = model
    return out
