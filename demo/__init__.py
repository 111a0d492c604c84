"""The demo partner site of ``turbocubes up --demo`` (docs/architecture.md section 8). Not a cube: no ``cube.py``.

* ``stories.py``, ``features.py``, ``products.py``, ``posts.py`` — the invented content;
* ``pictures.py`` — images drawn with Pillow; ``feeds.py``, ``pages.py`` — RSS, Turbo RSS, YML,
  sitemap and HTML; ``content.py`` — everything the site serves, and its four sources;
* ``server.py`` — the aiohttp server on 127.0.0.1;
* ``registration.py`` — feeds registered as ``turbocubes feeds add`` does (the host autoparsed);
* ``tracker.py`` + ``progress.py`` — progress read from the stores and shown in the terminal;
* ``site.py`` — ``DemoSite``, what the launcher calls.
"""

from demo.site import DemoSite, demo_settings

__all__ = ["DemoSite", "demo_settings"]
