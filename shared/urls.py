"""URL normalization: the one ``canonical_url`` every cube uses (docs/architecture.md sections 4 and 5).

The canonical URL is the key of a document everywhere: on the bus, in the
hash store, in the KV store. Two spellings of one page must give one key, and
normalizing a canonical URL again must give it back unchanged (idempotence).

What ``canonical_url`` does (RFC 3986 section 6 plus what browsers do, WHATWG):

* trims surrounding whitespace and drops tabs and newlines inside (browsers do);
* lower-cases the scheme and the host; only ``http`` and ``https`` are accepted;
* turns a non-ASCII host into punycode (IDNA 2008 with UTS 46 mapping, like
  browsers), drops one trailing dot, and writes IP addresses in their
  standard form (``[2001:db8::1]``); a host that ends in a number is an IPv4
  address in any spelling resolvers accept (WHATWG's IPv4 parser, as
  ``inet_aton``): ``0x7f000002``, ``2130706434``, ``127.2`` and ``0177.0.0.2``
  are all ``127.0.0.2``, one host, not four;
* drops the default port (80 / 443) and the fragment;
* percent-encoding: decodes escapes of unreserved characters (``%7E`` ->
  ``~``), upper-cases the hex of the others (``%2f`` -> ``%2F``), encodes
  what may not appear raw (spaces, non-ASCII as UTF-8, a ``%`` not starting an
  escape), and leaves reserved characters as they are, since they carry meaning;
* treats ``\\`` as ``/`` in the path (browsers do), removes dot segments, and
  makes an empty path ``/``; an empty query (a bare ``?``) is dropped, a
  non-empty query keeps its order.

Unusable input raises ``ValueError`` with the reason: no scheme or host, a
scheme other than http(s), credentials in the URL (they would leak into public
keys), a bad port, a host that is not a valid name, an over-long URL.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from urllib.parse import urljoin

import idna

__all__ = [
    "MAX_URL_LENGTH",
    "canonical_host",
    "canonical_url",
    "host_of",
    "is_ip_literal",
    "resolve_url",
    "try_canonical_url",
]

#: the longest canonical URL we accept; the message models cap ``url`` at the same length
MAX_URL_LENGTH = 4096

_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SUB_DELIMS = "!$&'()*+,;="
#: characters left raw in a path segment (RFC 3986 "pchar" plus "/")
_PATH_SAFE = frozenset(_UNRESERVED | set(_SUB_DELIMS) | set(":@/"))
#: characters left raw in a query (RFC 3986 "query")
_QUERY_SAFE = frozenset(_PATH_SAFE | set("?"))
_HEX = frozenset("0123456789abcdefABCDEF")
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
#: an ASCII host name label: letters, digits, hyphen, underscore (seen in the wild)
_ASCII_HOST_RE = re.compile(r"^[a-z0-9_\-]+(\.[a-z0-9_\-]+)*$")
_TAB_NEWLINE = str.maketrans("", "", "\t\n\r")
#: what browsers trim from both ends of a URL
_C0_AND_SPACE = "".join(chr(c) for c in range(0x21))


def _normalize_escapes(text: str, safe: frozenset[str]) -> str:
    """Stable percent-encoding of one component (see the module docstring)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "%":
            if i + 2 < n and text[i + 1] in _HEX and text[i + 2] in _HEX:
                decoded = chr(int(text[i + 1 : i + 3], 16))
                out.append(decoded if decoded in _UNRESERVED else "%" + text[i + 1 : i + 3].upper())
                i += 3
                continue
            out.append("%25")  # a lone % is data, not an escape
        elif ch in safe:
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        i += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4, on a path that starts with ``/``."""
    out: list[str] = []
    segments = path.split("/")[1:]
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == ".":
            if last:
                out.append("")
        elif segment == "..":
            if out:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/" + "/".join(out)


def canonical_host(host: str) -> str:
    """A host name in its canonical form: lower case, punycode, no trailing dot; IPs standardized.

    ``ValueError`` when it is empty or not a valid host name.
    """
    if "%" in host:
        # browsers decode escapes in the host before IDNA; undecodable bytes make it invalid
        host = _percent_decode_host(host)
    if host.startswith("[") and host.endswith("]"):
        try:
            return f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]"
        except ValueError:
            raise ValueError(f"invalid IPv6 address {host!r}") from None
    if host.endswith("."):
        host = host[:-1]
    if not host:
        raise ValueError("URL has no host")
    lowered = host.lower()
    if lowered.isascii():
        if not _ASCII_HOST_RE.match(lowered):
            raise ValueError(f"invalid host name {host!r}")
        if lowered.startswith("xn--") or ".xn--" in lowered:
            _check_idna(lowered)
        if _ends_in_number(lowered):
            return _ipv4(lowered, host)
        return lowered
    return _check_idna(host)


def is_ip_literal(host: str) -> bool:
    """Whether a canonical host is an IP address (``[v6]`` or a dotted quad) rather than a name in DNS."""
    return host.startswith("[") or _ends_in_number(host)


def _ipv4_number(part: str) -> int | None:
    """One part of an IPv4 host as WHATWG (and ``inet_aton``) read it: 0x hex, 0 octal, else decimal."""
    base = 10
    if part[:2] in ("0x", "0X"):
        part, base = part[2:], 16
    elif len(part) > 1 and part.startswith("0"):
        part, base = part[1:], 8
    if not part:
        return 0  # "0x" alone is zero
    try:
        return int(part, base) if part.isalnum() and part.isascii() else None
    except ValueError:
        return None


def _ends_in_number(host: str) -> bool:
    """WHATWG's "ends in a number": the last label is all digits, or a number in 0x / 0 spelling."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    last = parts[-1]
    return bool(last) and (last.isdigit() or _ipv4_number(last) is not None)


def _ipv4(host: str, given: str) -> str:
    """The dotted-quad of a host that ends in a number, as resolvers read it (``0x7f000002``, ``127.1``,
    ``0177.0.0.1`` are all one address); ``ValueError`` when it is no IPv4 address at all."""
    parts = host.split(".")
    numbers = [_ipv4_number(p) if p else None for p in parts]
    if len(parts) > 4 or any(n is None for n in numbers):
        raise ValueError(f"invalid IPv4 address {given!r}")
    *head, last = [n for n in numbers if n is not None]
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(parts)):
        raise ValueError(f"invalid IPv4 address {given!r}")
    value = last + sum(n << (8 * (3 - i)) for i, n in enumerate(head))
    return str(ipaddress.IPv4Address(value))


def _check_idna(host: str) -> str:
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError) as exc:
        raise ValueError(f"invalid internationalized host name {host!r}: {exc}") from None


def _percent_decode_host(host: str) -> str:
    raw = bytearray()
    i = 0
    while i < len(host):
        if host[i] == "%" and i + 2 < len(host) and all(c in _HEX for c in host[i + 1 : i + 3]):
            raw.append(int(host[i + 1 : i + 3], 16))
            i += 3
        else:
            raw.extend(host[i].encode("utf-8"))
            i += 1
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"invalid percent-encoding in host {host!r}") from None


def _split_authority(authority: str, scheme: str) -> tuple[str, int | None]:
    if "@" in authority:
        raise ValueError("URL contains credentials (user:password@); refused so they never leak into keys")
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise ValueError(f"unterminated IPv6 address in {authority!r}")
        host, rest = authority[: end + 1], authority[end + 1 :]
        if rest and not rest.startswith(":"):
            raise ValueError(f"unexpected text after IPv6 address in {authority!r}")
        port_text = rest[1:] if rest else ""
    else:
        host, _, port_text = authority.partition(":")
    port: int | None = None
    if port_text:
        if not port_text.isascii() or not port_text.isdigit():
            raise ValueError(f"invalid port {port_text!r}")
        port = int(port_text)
        if port > 65535:
            raise ValueError(f"port {port} out of range (0-65535)")
        if port == _DEFAULT_PORTS[scheme]:
            port = None
    return canonical_host(host), port


def canonical_url(url: str) -> str:
    """The canonical form of an absolute http(s) URL (see the module docstring); ``ValueError`` if not."""
    if not isinstance(url, str):
        raise ValueError(f"URL must be a string, not {type(url).__name__}")
    # a long URL is normalized but not remembered: 65,536 of them at 4 KB would hold 256 MB
    return _canonical_url_cached(url) if len(url) < _CACHED_MAX_LEN else _canonical(url)


#: A URL the normalization below returns unchanged (but for the "/" of an empty path): http(s) in
#: lower case, a lower-case ASCII host that is not punycode and whose last label starts with a letter
#: (so not an IP address), a port written plainly (checked in ``_plain``), a path and a query of
#: characters that are never re-encoded, no escapes, no fragment. Most feed links and image URLs look
#: like this, and matching it costs ~1 us against ~20 us for the full normalization (a catalog's first
#: load meets 100,000 new URLs). Tests hold it equal to the full normalization.
_PLAIN = re.compile(
    r"(https?)://(?!xn--)(?:[a-z0-9_-]+\.)*[a-z][a-z0-9-]*(?::([1-9][0-9]{0,4}))?"
    r"(/[A-Za-z0-9._~!$&'()*+,;=:@/-]*)?(\?[A-Za-z0-9._~!$&'()*+,;=:@/?-]+)?"
)


def _plain(url: str) -> str | None:
    """The canonical form of ``url`` when it is canonical already (but for an empty path); else None."""
    m = _PLAIN.fullmatch(url)
    if m is None or len(url) >= MAX_URL_LENGTH or "/." in url or ".xn--" in url:
        return None
    scheme, port, path, query = m.groups()
    if port is not None and (int(port) > 65535 or int(port) == _DEFAULT_PORTS[scheme]):
        return None
    if path is None:  # "http://a.test" and "http://a.test?q=1": the empty path is "/"
        return url[: m.start(4)] + "/" + query if query else url + "/"
    return url


def _canonical(url: str) -> str:
    plain = _plain(url)
    return plain if plain is not None else _normalize(url)


#: the same URLs come back again and again (every image of every edition of a document, in the
#: parser, the media cube and the kvwriter): normalizing was ~10 % of a warm pipeline's CPU
_canonical_url_cached = functools.lru_cache(maxsize=65_536)(_canonical)
#: URLs at least this long are not remembered
_CACHED_MAX_LEN = 2048


def _normalize(url: str) -> str:
    """The full normalization (the module docstring); ``_plain`` is its shortcut."""
    text = url.strip(_C0_AND_SPACE).translate(_TAB_NEWLINE)
    if not text:
        raise ValueError("URL is empty")
    match = _SCHEME_RE.match(text)
    if match is None:
        raise ValueError(f"URL has no scheme (an absolute http(s) URL is required): {url[:200]!r}")
    scheme = match.group(1).lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError(f"unsupported URL scheme {scheme!r} (only http and https)")
    rest, _, _fragment = text[match.end() :].partition("#")
    rest, has_query, query = rest.partition("?")
    rest = rest.replace("\\", "/")  # browsers read \ as / before the query in http(s) URLs
    if not rest.startswith("//"):
        raise ValueError(f"URL has no host: {url[:200]!r}")
    rest = rest.lstrip("/")  # http:///a.example/ is read as http://a.example/ by browsers
    authority, slash, path = rest.partition("/")
    host, port = _split_authority(authority, scheme)
    path = _remove_dot_segments(_normalize_escapes(slash + path, _PATH_SAFE)) if slash else "/"
    result = f"{scheme}://{host}"
    if port is not None:
        result += f":{port}"
    result += path
    if has_query and query:
        result += "?" + _normalize_escapes(query, _QUERY_SAFE)
    if len(result) > MAX_URL_LENGTH:
        raise ValueError(f"URL longer than {MAX_URL_LENGTH} characters ({len(result)})")
    return result


def try_canonical_url(url: str) -> str | None:
    """``canonical_url`` or None when the URL is unusable (for filters that drop bad links)."""
    try:
        return canonical_url(url)
    except ValueError:
        return None


def host_of(url: str) -> str:
    """The canonical host (no port) of ``url``; ``ValueError`` if the URL is unusable."""
    canonical = canonical_url(url)
    authority = canonical.split("/", 3)[2]
    if authority.startswith("["):
        return authority[: authority.index("]") + 1]
    return authority.partition(":")[0]


def resolve_url(base: str, reference: str) -> str:
    """Resolve a link found in a document at ``base`` and return it canonical (``ValueError`` if unusable)."""
    reference = reference.strip().translate(_TAB_NEWLINE).replace("\\", "/")
    return canonical_url(urljoin(base, reference))
