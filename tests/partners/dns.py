"""A real DNS server on 127.0.0.1 for the TXT host-verification tests (``dnslib``; UDP, a port of its own).

``DnsServer`` answers the TXT records a test sets (``set_txt``) and NXDOMAIN for
every other name, so code that reads DNS through ``shared.webmaster.verification.dns_txt_lookup``
(pointed at ``server.address`` by ``api.dns_servers``) never reaches the real
DNS. It runs in dnslib's own thread: the code under test talks to it over a
socket, as it would to a resolver. Queries are counted (``queries``).
"""

from __future__ import annotations

import threading
from typing import Any

from dnslib import QTYPE, RCODE, RR, TXT, DNSRecord
from dnslib.server import BaseResolver, DNSServer

__all__ = ["DnsServer"]


class _Quiet:
    """dnslib logs every request to stdout by default; the tests read the counts instead."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


class _Records(BaseResolver):  # type: ignore[misc]
    def __init__(self, server: DnsServer) -> None:
        self.server = server

    def resolve(self, request: DNSRecord, handler: Any) -> DNSRecord:
        reply = request.reply()
        name = str(request.q.qname).rstrip(".").lower()
        with self.server.lock:
            self.server.queries[name] = self.server.queries.get(name, 0) + 1
            values = self.server.txt.get(name)
        if values is None:
            reply.header.rcode = RCODE.NXDOMAIN
        elif request.q.qtype == QTYPE.TXT:
            for value in values:
                reply.add_answer(RR(request.q.qname, QTYPE.TXT, rdata=TXT(value), ttl=1))
        return reply


class DnsServer:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.txt: dict[str, list[str]] = {}
        self.queries: dict[str, int] = {}
        self._server = DNSServer(_Records(self), port=0, address="127.0.0.1", tcp=False, logger=_Quiet())

    @property
    def address(self) -> str:
        """``127.0.0.1:<port>``, as ``api.dns_servers`` takes it."""
        return f"127.0.0.1:{self._server.server.server_address[1]}"

    def set_txt(self, name: str, *values: str) -> None:
        with self.lock:
            self.txt[name.lower()] = list(values)

    def start(self) -> None:
        # dnslib's start_thread polls for shutdown every 0.5 s; a short poll keeps stop() quick
        self._thread = threading.Thread(
            target=self._server.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.server.shutdown()
        self._server.server.server_close()
        self._thread.join(timeout=5)
