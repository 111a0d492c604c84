"""The table of problem codes: the one place every code is defined (docs/architecture.md section 10).

(The rows of ``host.*`` and ``conflict.*``, sites and their owners, are in ``problem_codes_sites.py``:
the same table, in the module of its area.)

A code is a contract with webmasters and their tools: once published it keeps
its meaning and is never reused (retire one by leaving it here, marked
retired). Each row gives the default severity and the hint -- how to fix it --
that ``shared.problems.problem`` fills in; a caller may pass a more specific
hint. ``schemas/problems.md`` is generated from this table
(``shared.contracts.problems_markdown``, ``turbocubes schemas write``; a test keeps it
equal), ``GET /api/v1/problems`` serves it, and the OpenAPI document points at both.

Codes are ``<area>.<what>``: ``fetch.*`` the crawler's fetch of the feed,
``host.*`` the source's right to its host, ``feed.*`` / ``xml.*`` / ``json.*`` the
body as a whole, ``item.*`` / ``turbo.*`` / ``yml.*`` one item, ``conflict.*``
ownership of a URL between sources, ``image.*`` / ``page.*`` what a published page lost,
``autoparser.*`` the pages of a site read without a feed, ``engine.*`` the pipeline's own engines
(an operator's matter, which webmasters see as late pages).
"""

from __future__ import annotations

from shared.problems.code import ProblemCode
from shared.problems.codes_sites import SITE_ROWS

__all__ = ["CODES", "ProblemCode"]


_ROWS: tuple[ProblemCode, ...] = (
    # ---------------------------------------------------------------- fetching the feed
    ProblemCode(
        "fetch.not_found",
        "error",
        "the feed URL answered 404 or 410",
        "The feed is not at this address. Open it in a browser; register the URL where the feed really is.",
    ),
    ProblemCode(
        "fetch.http_error",
        "error",
        "the feed URL answered an HTTP error",
        "Make the feed URL answer 200 with the feed (check it with `curl -I URL`); 401/403 mean our "
        "crawler is refused: allow it.",
    ),
    ProblemCode(
        "fetch.server_error",
        "error",
        "the feed's server answered 5xx",
        "Your server failed while serving the feed; we retry with back-off. Check the server's error log.",
    ),
    ProblemCode(
        "fetch.unreachable",
        "error",
        "the feed's host could not be reached (DNS, connection or timeout)",
        "Check that the host name resolves in public DNS and that the server answers from the internet "
        "within the crawler's timeout.",
    ),
    ProblemCode(
        "fetch.too_large",
        "error",
        "the feed is larger than the crawler accepts",
        "Make the feed smaller than crawler.max_feed_bytes (split it into several feeds), or ask the "
        "operator to raise the limit.",
    ),
    ProblemCode(
        "fetch.redirects",
        "error",
        "too many redirects, or a redirect loop",
        "Point the feed URL at the final address (at most a few redirects, none back to itself).",
    ),
    ProblemCode(
        "fetch.robots_denied",
        "error",
        "robots.txt forbids our crawler to fetch the feed",
        "Allow the turbocubes user agent in robots.txt for the feed's path.",
    ),
    ProblemCode(
        "fetch.blocked_address",
        "error",
        "the feed's host resolves to a private, loopback or reserved address",
        "Public feeds must resolve to public addresses. To try a feed on a local or private server, the "
        "operator adds its host to http.allowlist (TURBOCUBES_HTTP_ALLOWLIST).",
    ),
    ProblemCode(
        "fetch.bad_url",
        "error",
        "the feed URL cannot be fetched",
        "Register an absolute http(s) URL with a valid host name.",
    ),
    ProblemCode(
        "fetch.throttled",
        "info",
        "the host asked us to slow down (429 / 503 with Retry-After)",
        "Nothing to do unless it lasts: we wait as asked and fetch again. Raise the rate limit for our "
        "crawler if your pages are late.",
    ),
    ProblemCode(
        "robots.crawl_delay_capped",
        "warning",
        "robots.txt asks for a longer Crawl-delay than the crawler honours",
        "The crawler waits at most crawler.max_crawl_delay_s between requests to your host, so your pages "
        "and images come in on time. Lower Crawl-delay in robots.txt to that or less (or remove it) so that "
        "robots.txt says what really happens.",
    ),
    ProblemCode(
        "fetch.credentials",
        "error",
        "the feed's credentials could not be read, so it was not fetched",
        "Enter the feed's username, password and headers again (PATCH /api/v1/feeds/{id} with its options, "
        "or the feed's page in the console): they were kept under a key the operator has changed since.",
    ),
    *SITE_ROWS,  # the source's right to its host, and who owns a URL (problem_codes_sites.py)
    # ---------------------------------------------------------------- the body as a whole
    ProblemCode(
        "feed.empty",
        "error",
        "the body is empty",
        "The URL answered 200 with nothing: make it return the feed.",
    ),
    ProblemCode(
        "feed.too_large",
        "error",
        "the body is too big to read whole, and is not a YML catalog that can be read as a stream",
        "Only a YML catalog is read as a stream past parser.max_body_bytes: split a bigger RSS / Atom / Turbo "
        "feed into several, and give a big catalog an XML declaration that names its charset "
        '(<?xml version="1.0" encoding="UTF-8"?>). A gzipped catalog must inflate to less than 4 GiB.',
    ),
    ProblemCode(
        "feed.not_a_feed",
        "error",
        "the body is not a feed (unexpected root element)",
        "Serve an RSS 2.0, Atom, Turbo RSS or YML document; the URL may point at an HTML page instead of the feed.",
    ),
    ProblemCode(
        "feed.not_readable",
        "error",
        "the body could not be read as any feed format",
        "Validate the feed (https://validator.w3.org/feed/) and fix the first error it reports.",
    ),
    ProblemCode(
        "feed.format_mismatch",
        "error",
        "the body is not in the declared format",
        "Register (or upload) it with the format it really has, or with format auto.",
    ),
    ProblemCode(
        "feed.misplaced_items",
        "warning",
        "an Atom feed holds RSS <item> elements instead of <entry>",
        "Atom entries are <entry> elements: rename <item> to <entry> (or publish the feed as RSS 2.0). "
        "We read them as entries meanwhile.",
    ),
    ProblemCode(
        "xml.malformed",
        "error",
        "the XML is not well-formed and nothing could be recovered",
        "Fix the XML at the line and column given (escape & as &amp; and < as &lt; in text; close "
        "every tag), then fetch the feed again.",
    ),
    ProblemCode(
        "xml.recovered",
        "warning",
        "the XML is not well-formed; it was read in recovery mode",
        "Fix the XML at the line and column given. Until then the affected items may be published with "
        "text missing: check their pages.",
    ),
    ProblemCode(
        "xml.bare_ampersand",
        "warning",
        "a bare & in text was kept as it reads",
        "Write & as &amp; (or wrap the text in <![CDATA[...]]>); we kept the text, a strict reader would "
        "refuse the feed.",
    ),
    ProblemCode(
        "xml.html_entity",
        "warning",
        "an HTML entity that XML does not define (&nbsp;, &mdash;) was read as its character",
        "XML knows only &amp; &lt; &gt; &quot; &apos;: write the character itself or a numeric reference "
        "(&#160;), or wrap the HTML in <![CDATA[...]]>. A strict reader refuses the feed.",
    ),
    ProblemCode(
        "xml.control_character",
        "warning",
        "a control character XML forbids (NUL, U+0001-U+001F but tab and newlines) was dropped",
        "Remove the character from the feed (it is often a database's padding or a bad copy-paste): XML "
        "allows it nowhere, not even in CDATA, and a strict reader refuses the feed. We dropped that one "
        "character and kept the text around it.",
    ),
    ProblemCode(
        "xml.undeclared_prefix",
        "warning",
        "an XML prefix is used without its namespace declaration",
        'Declare the namespace on the root element, e.g. <rss xmlns:turbo="http://turbo.yandex.ru" '
        'version="2.0">; we read the prefix as if it were declared.',
    ),
    ProblemCode(
        "xml.hostile",
        "error",
        "the XML declares entities or a DTD, or is absurdly nested",
        "Remove the <!DOCTYPE> and entity declarations: feeds need neither, and we never expand them.",
    ),
    ProblemCode(
        "json.invalid",
        "error",
        "the body is not valid JSON",
        "Fix the JSON at the line and column given (a JSON linter shows the same place).",
    ),
    ProblemCode(
        "json.shape",
        "error",
        "the JSON is not a list of documents",
        'Send {"documents": [...]}, a list of documents or one document (schemas/partner-document.v1.json).',
    ),
    ProblemCode(
        "json.too_many_documents",
        "error",
        "too many documents in one upload",
        "Split the upload into several requests.",
    ),
    # ---------------------------------------------------------------- one item
    ProblemCode(
        "item.no_link",
        "error",
        "the item has no link",
        "Give every item a <link> (or Atom <link href>, YML <url>): it is the address of the page.",
    ),
    ProblemCode(
        "item.bad_link",
        "error",
        "the item's link is not a usable URL",
        "Use an absolute http(s) URL for the item's link.",
    ),
    ProblemCode(
        "item.foreign_host",
        "error",
        "the item's link is on another host than the feed",
        "A feed may only publish pages of its own site: fix the link, or register the other host and a "
        "feed of its own.",
    ),
    ProblemCode(
        "item.filtered",
        "info",
        "the feed's own filters left the item out",
        "Nothing to fix if that is what you wanted; otherwise change the feed's filters (keep or drop by "
        "category or pattern) in its options.",
    ),
    ProblemCode(
        "feed.filter_too_slow",
        "warning",
        "a filter pattern took too long on an item, so the item was kept",
        "Simplify the pattern: nested repetition such as (a+)+ can take forever on some texts. A search gets "
        "a few milliseconds per item.",
    ),
    ProblemCode(
        "item.no_title",
        "error",
        "the item has no title",
        "Give every item a non-empty <title> (Turbo: or an <h1> in the <header>).",
    ),
    ProblemCode(
        "item.duplicate_link",
        "error",
        "an earlier item of the feed has the same link",
        "Give every item its own link; the first item with a link is kept.",
    ),
    ProblemCode(
        "item.too_many",
        "error",
        "the item is past the per-feed item limit",
        "Split the feed (parser.max_items items per feed), or keep only the newest items in it.",
    ),
    ProblemCode(
        "item.too_large",
        "error",
        "the item's content is larger than the per-item limit",
        "Shorten the item or split the article (parser.max_item_bytes per item).",
    ),
    ProblemCode(
        "item.unreadable",
        "error",
        "the item could not be read",
        "Fix the item at the line given; the message says what was wrong with it.",
    ),
    ProblemCode(
        "item.invalid",
        "error",
        "the document does not match the schema",
        "Fix the fields named in the message (schemas/partner-document.v1.json has every field).",
    ),
    ProblemCode(
        "item.too_complex",
        "error",
        "the item's HTML took too long to prepare (sanitizing it), so it is not published",
        "Simplify the item's HTML: elements nested thousands deep (unclosed <div> or <li>), thousands of "
        "attributes on one element or megabytes of entities (&nbsp;) cost that (parser.item_deadline_s).",
    ),
    ProblemCode(
        "item.title_cut",
        "warning",
        "the item's title is longer than a page's title may be (2,000 characters): it is cut",
        "Give the item a title of a sentence or two; the text belongs in its description or content.",
    ),
    ProblemCode(
        "item.bad_price",
        "error",
        "the offer's price is not a price, so the offer is not published",
        "Write it as a decimal number below 10^15 with at most 4 digits after the point ('.' or ','), in at "
        "most 32 characters (1990, 1 990,50, 1.99e3); a price on request is no <price> at all.",
    ),
    ProblemCode(
        "item.bad_number",
        "warning",
        "a number of the item is not one a page can show (an old price, a delivery option): left out",
        "Write old prices and delivery costs as prices (1990, 1 990,50) and delivery days as a number or a "
        "range (2, 1-3); until then the page goes without what the message names.",
    ),
    ProblemCode(
        "item.bad_date",
        "warning",
        "a date of the item is outside 1970-2100: the page is published without it",
        "Give the item's real date with its UTC offset: Tue, 21 Apr 2015 14:15:00 +0300 or 2015-04-21T14:15:00+03:00.",
    ),
    ProblemCode(
        "item.deletion_refused",
        "error",
        'a deletion (turbo="false" or action delete) could not be applied',
        "The link must be a page of this site that this source published.",
    ),
    ProblemCode(
        "turbo.no_content",
        "error",
        "the Turbo item has no <turbo:content>",
        "Put the page's HTML in <turbo:content><![CDATA[...]]></turbo:content>.",
    ),
    # ---------------------------------------------------------------- ownership between sources
    ProblemCode(
        "catalog.held",
        "warning",
        "the catalog lost more than half of its offers in one fetch; their pages are kept for now",
        "If the offers are really gone, do nothing: the next fetch that lacks them removes their pages "
        "(use fetch now to do it at once). If the export was cut short, fix it before the next fetch.",
    ),
    ProblemCode(
        "yml.deep_categories",
        "warning",
        "the catalog's category tree is deeper than 32 levels: pages show the 32 levels nearest each offer",
        "Check the categories' parentId: a chain that deep is an export's mistake (Market's tree is 6-7 deep).",
    ),
    ProblemCode(
        "turbo.unsupported_block",
        "warning",
        "a Turbo block this page does not render as such; its content is shown as plain HTML",
        "Use one of the blocks the page renders (cubes/kvwriter/README.md lists them), or accept the plain "
        "form of this one.",
    ),
    # ---------------------------------------------------------------- what a page lost
    ProblemCode(
        "image.not_found",
        "error",
        "an image answered 404 or 410 (not found); the page's state says whether it was held back",
        "Put the image at that address (or give the item the image's right URL), then press Fetch now in "
        "the console (or POST /api/v1/feeds/{feed_id}/fetch): the image is fetched again at once and the "
        "page rebuilt with it. Left alone, the same address is tried again only after several days.",
    ),
    ProblemCode(
        "image.http_error",
        "error",
        "an image answered an HTTP error; the page's state says whether it was held back",
        "Make the image URL answer 200 to our crawler (401/403: allow it), or give the item another image "
        "URL, then press Fetch now: the image is fetched again at once. Left alone, a failed address is "
        "tried again only after several days.",
    ),
    ProblemCode(
        "image.unreachable",
        "error",
        "an image's host could not be reached in time; the page was published without it",
        "Check that the image host answers from the internet, then press Fetch now; we also try it again "
        "by ourselves within hours.",
    ),
    ProblemCode(
        "image.not_an_image",
        "error",
        "the image URL does not answer an image; the page's state says whether it was held back",
        "The URL must return the image itself (JPEG, PNG, GIF, WebP, AVIF), not an HTML page. Fix it, then "
        "press Fetch now: the image is fetched again at once.",
    ),
    ProblemCode(
        "image.unsupported",
        "error",
        "the image's format is not supported, or the file is corrupt",
        "Use JPEG, PNG, GIF, WebP or AVIF, and check that the file opens; then press Fetch now.",
    ),
    ProblemCode(
        "image.too_large",
        "error",
        "the image is larger than the CDN accepts (bytes or pixels)",
        "Serve a smaller image (at most 20 MB and 50 megapixels by default), then press Fetch now.",
    ),
    ProblemCode(
        "image.refused",
        "error",
        "the image may not be fetched (robots.txt, a private address, a bad URL)",
        "Allow our crawler to fetch images in robots.txt, and use public absolute image URLs; then press Fetch now.",
    ),
    ProblemCode(
        "image.late",
        "error",
        "the image was not copied to our CDN in time; the page was published without it",
        "The image host is slow or asks us to wait. Make it answer faster, then press Fetch now: the page "
        "is rebuilt with the image once it is copied.",
    ),
    ProblemCode(
        "page.content_dropped",
        "warning",
        "part of the content could not be carried into the Turbo page",
        "The message names what was removed (scripts, forms, unsupported embeds). Use the Turbo markup "
        "for it, or accept that the Turbo page goes without it.",
    ),
    ProblemCode(
        "page.incomplete",
        "error",
        "the page lost images or tables and was held back, not published",
        "Fix what the message and the page's other problems name: an image that cannot be fetched or "
        "copied (its own problem says why), an image without a web URL (data:, javascript:, none: give "
        "it an http(s) src), a table inside an element that is removed with its content (noscript, "
        "object, a form). The page is published at the item's next version that keeps them; until "
        "then its previous version, if any, stays.",
    ),
    ProblemCode(
        "autoparser.incomplete",
        "error",
        "the autoparser did not publish a page: its extraction lost most of the article",
        "The message says against what (the page's <article>, schema.org articleBody, og:description or "
        "its largest text block) and how much was lost. Mark the story up with <article> or schema.org "
        "articleBody, keep it out of comment and sidebar containers, or publish the page in a feed.",
    ),
    ProblemCode(
        "autoparser.not_article",
        "warning",
        "the autoparser did not publish a page: it does not read as an article",
        "The message says why (too little article text, or mostly links). An article's text belongs in "
        "<article> or paragraphs outside menus, sidebars and comments; or publish the page in a feed.",
    ),
    ProblemCode(
        "page.full_text_unavailable",
        "warning",
        "the item is a summary and its page could not be read: published with the feed's text",
        "Put the whole article in the item (content:encoded, turbo:content), or let the item's page answer "
        "our crawler with its article (robots.txt, status, size): the message says what it answered.",
    ),
    ProblemCode(
        "page.content_mismatch",
        "error",
        "the Turbo page carries much less than the original page's article",
        "Put the full article in the item (content:encoded, turbo:content), or set the feed's full_text "
        "to auto or always so that the article is read from the page.",
    ),
    # Yandex markup that is not rendered
    ProblemCode(
        "turbo.extended_html_ignored",
        "warning",
        "turbo:extendedHtml is not supported: the page is rendered from the standard Turbo markup",
        "Extended HTML's own styles and scripts are not carried; use the standard Turbo elements.",
    ),
    ProblemCode(
        "turbo.analytics_ignored",
        "info",
        "the channel's analytics counters are not installed on the Turbo pages",
        "The console counts the pages' visits; remove turbo:analytics to silence this.",
    ),
    ProblemCode(
        "turbo.ads_ignored",
        "info",
        "the channel's ad blocks are not shown on the Turbo pages",
        "turbocubes pages show no ads; remove turbo:adNetwork and the items' ad figures to silence this.",
    ),
    ProblemCode(
        "turbo.markup_ignored",
        "warning",
        "Turbo markup that turbocubes does not render was left out",
        "The message names the element; use the Turbo elements the page renders, or remove it.",
    ),
    ProblemCode(
        "engine.unavailable",
        "error",
        "one of the pipeline's engines (the bus, the store, the blob store) is unreachable",
        "Nothing is lost: the work waits and goes on where it stopped once the engine is back; pages are "
        "late meanwhile. For the operator: start the engine again (ops/README.md) and watch "
        "turbocubes_dependency_down.",
    ),
)

#: every code, by name
CODES: dict[str, ProblemCode] = {row.code: row for row in _ROWS}
assert len(CODES) == len(_ROWS), "a problem code is defined twice"
