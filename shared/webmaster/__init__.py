"""The webmaster's room: sites and their owners, feeds and what a webmaster sets on them (docs/architecture.md
section 4, "Rooms").

Claims, proofs and rights (``hosts``, ``verification``, ``rights``, ``access``), feed registration and its
options (``feeds``, ``feed_options``, ``feed_discovery``, ``opml``, ``opml_import``), sign-up, branding, the
Turbo switch, per-URL refresh and IndexNow, the words a screen says and the overview every screen reads.
It may import the pages, images and problems rooms; nothing below it imports it.
"""
