"""Configuration: ``turbocubes.toml`` + ``TURBOCUBES_<SECTION>_<KEY>``, read once and frozen (docs/architecture.md s.7).

Every key has a default, so with no file and no variables everything runs
embedded under ``./var/``. A wrong value fails at start with a ``ConfigError``
that names the key, the value, what was expected and the valid choices.
Handlers never read ``os.environ``; they get these objects.

* ``section.py`` — what a section is (a frozen pydantic model) and how a
  wrong value is told;
* ``sections.py`` — every section: its keys, defaults, comments and rules;
* ``settings.py`` — ``Settings``, all of them;
* ``load.py`` — the file and the environment, validated;
* ``example.py`` — ``turbocubes.example.toml``, generated.
"""

from shared.config.example import example_toml
from shared.config.load import ENV_PREFIX, load_settings
from shared.config.section import Section
from shared.config.sections import (
    ApiConfig,
    AutoparserConfig,
    BlobsConfig,
    BusConfig,
    CdnConfig,
    CrawlerConfig,
    DelayConfig,
    FrontendConfig,
    HostLane,
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
from shared.config.settings import Settings

__all__ = [
    "ENV_PREFIX",
    "ApiConfig",
    "AutoparserConfig",
    "BlobsConfig",
    "BusConfig",
    "CdnConfig",
    "CrawlerConfig",
    "DelayConfig",
    "FrontendConfig",
    "HostLane",
    "HttpConfig",
    "IndexerConfig",
    "KvwriterConfig",
    "MediaConfig",
    "NotifyConfig",
    "ParserConfig",
    "RuntimeConfig",
    "SchedulerConfig",
    "SearchConfig",
    "SecretsConfig",
    "Section",
    "Settings",
    "StoreConfig",
    "WordstatConfig",
    "example_toml",
    "load_settings",
]
