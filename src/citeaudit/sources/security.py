"""Where the resolver may connect: the address policy, the name-resolution hook and the transport that applies both.

Every TCP connection goes through :class:`GuardedBackend`: the host name is resolved first (through the
host map, else the system resolver), each address is checked, and only then is a socket opened to that
very address. Since every redirect hop opens its connection the same way, the check holds after DNS and at
every hop; a name that resolves to a public address and then to a private one (DNS rebinding) is caught
because the address checked is the address connected to.

Names in the host map are the operator's own declaration (``--map-host name=ip``); they are trusted as given.
"""

from __future__ import annotations

import asyncio
import ipaddress
import select
import socket
import ssl
import typing
from collections.abc import Iterable, Mapping

import httpcore
import httpx

__all__ = [
    "AddressBlocked",
    "GuardedBackend",
    "NameNotResolved",
    "PerOriginTransport",
    "address_refusal",
    "embedded_ipv4",
    "guarded_transport",
]


class AddressBlocked(Exception):
    """A connection to a loopback, private, link-local, multicast or reserved address was refused."""

    def __init__(self, host: str, address: str, kind: str) -> None:
        self.host, self.address, self.kind = host, address, kind
        super().__init__(f"{host!r} resolves to {kind} address {address}; refused (pass --allow-private to allow)")


class NameNotResolved(Exception):
    """The host name has no address."""

    def __init__(self, host: str, detail: str) -> None:
        self.host = host
        super().__init__(f"cannot resolve {host!r}: {detail}")


_SPECIAL_IPV4: tuple[tuple[str, str], ...] = (
    # IANA IPv4 Special-Purpose Address Registry: the blocks that are not globally reachable, with the kind given.
    ("0.0.0.0/8", "unspecified"),  # "this network"
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "not global"),  # shared address space (carrier-grade NAT)
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private"),
    # IETF protocol assignments, whole: its two globally reachable anycast addresses (PCP, TURN) are not web
    # servers, and a resolver of cited pages has no business there.
    ("192.0.0.0/24", "reserved"),
    ("192.0.2.0/24", "reserved"),  # TEST-NET-1
    ("192.88.99.0/24", "reserved"),  # deprecated 6to4 relay anycast
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "reserved"),  # benchmarking
    ("198.51.100.0/24", "reserved"),  # TEST-NET-2
    ("203.0.113.0/24", "reserved"),  # TEST-NET-3
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),  # future use, limited broadcast included
)
"""IPv4 blocks refused, by kind (checked in addition to :mod:`ipaddress`, whose tables differ between Python
versions)."""

_SPECIAL_IPV6: tuple[tuple[str, str], ...] = (
    # IANA IPv6 Special-Purpose Address Registry and RFC 3879 (site-local): blocks not globally reachable. The
    # blocks that carry an IPv4 address (IPv4-mapped, NAT64 64:ff9b::/96, 6to4) are judged by that address first.
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("::/8", "reserved"),  # IPv4-compatible (deprecated) and other IETF-reserved space
    ("64:ff9b:1::/48", "reserved"),  # local-use IPv4/IPv6 translation
    ("100::/64", "reserved"),  # discard-only
    ("100:0:0:1::/64", "reserved"),  # dummy prefix
    # IETF protocol assignments, whole: Teredo (2001::/32) tunnels to an IPv4 host the address only obfuscates,
    # benchmarking, ORCHID, and anycast services that are not web servers.
    ("2001::/23", "reserved"),
    ("2001:db8::/32", "reserved"),  # documentation
    ("3fff::/20", "reserved"),  # documentation
    ("5f00::/16", "reserved"),  # segment routing identifiers
    ("fc00::/7", "private"),  # unique-local
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local"),  # deprecated, still routed inside sites
    ("ff00::/8", "multicast"),
)
"""IPv6 blocks refused, by kind."""

_V4 = tuple((ipaddress.IPv4Network(block), kind) for block, kind in _SPECIAL_IPV4)
_V6 = tuple((ipaddress.IPv6Network(block), kind) for block, kind in _SPECIAL_IPV6)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address leads to: IPv4-mapped (``::ffff:a.b.c.d``), the NAT64 well-known prefix
    (``64:ff9b::a.b.c.d``) or 6to4 (``2002:AABB:CCDD::``); ``None`` for any other address."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour


def address_refusal(address: str) -> str | None:
    """Why ``address`` is not a public destination (``loopback``, ``private``, ``link-local``, ``site-local``,
    ``multicast``, ``reserved``, ``unspecified`` or ``not global``), or ``None`` when it is one.

    An IPv6 address that carries an IPv4 address (IPv4-mapped, NAT64, 6to4) is judged as that IPv4 address: the
    packets end there. Every block of the IANA special-purpose registries that is not globally reachable is
    refused, and so is anything :mod:`ipaddress` does not call global.
    """
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        carried = embedded_ipv4(ip)
        if carried is not None:
            ip = carried
    for kind, flagged in (
        ("loopback", ip.is_loopback),
        ("unspecified", ip.is_unspecified),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("private", ip.is_private),
        ("reserved", ip.is_reserved),
    ):
        if flagged:
            return kind
    blocks: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = (
        _V4 if isinstance(ip, ipaddress.IPv4Address) else _V6
    )
    for block, kind in blocks:
        if ip in block:
            return kind
    return None if ip.is_global else "not global"


def _readable(sock: socket.socket) -> bool:
    """True when a read would not block (data, or the peer closed): an idle pooled connection that is unusable."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


class _Stream(httpcore.AsyncNetworkStream):
    """A connected stream that answers httpcore's per-request ``is_readable`` question from the socket it already
    holds (anyio rebuilds all socket attributes, a getpeername call included, for every such question)."""

    def __init__(self, inner: httpcore.AsyncNetworkStream, sock: socket.socket | None = None) -> None:
        self._inner = inner
        self._socket = sock if sock is not None else inner.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        return _Stream(await self._inner.start_tls(ssl_context, server_hostname, timeout), self._socket)

    def get_extra_info(self, info: str) -> typing.Any:
        if info == "is_readable" and self._socket is not None:
            return _readable(self._socket)
        return self._inner.get_extra_info(info)


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore network backend that resolves names itself, checks each address and connects to that address."""

    def __init__(self, host_map: Mapping[str, str] | None = None, allow_private: bool = False) -> None:
        self._host_map = {name.lower().rstrip("."): address for name, address in (host_map or {}).items()}
        self._allow_private = allow_private
        self._inner = httpcore.AnyIOBackend()

    async def addresses(self, host: str, port: int) -> list[str]:
        """The addresses a connection to ``host`` may use, checked against the policy (mapped names: as given)."""
        name = host.lower().rstrip(".").strip("[]")
        mapped = self._host_map.get(name)
        if mapped is not None:
            return [mapped]
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(name, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise NameNotResolved(name, str(exc)) from None
        found = list(dict.fromkeys(str(info[4][0]) for info in infos))
        if not found:
            raise NameNotResolved(name, "no address")
        if not self._allow_private:
            for address in found:
                kind = address_refusal(address)
                if kind is not None:
                    # One refused address refuses the name: connecting to "the other one" would let a
                    # resolver that answers both ways choose for us.
                    raise AddressBlocked(name, address, kind)
        return found

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self.addresses(host, port)
        last: Exception | None = None
        for address in addresses:
            try:
                stream = await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
                return _Stream(stream)
            except httpcore.ConnectError as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are never used by the resolver")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def guarded_transport(
    limits: httpx.Limits, backend: GuardedBackend, ssl_context: ssl.SSLContext
) -> httpx.AsyncHTTPTransport:
    """An httpx transport whose every connection goes through ``backend`` (no proxies, nothing from the env)."""
    # verify= the shared context: building one per transport reads the CA bundle again (~0.1 s each).
    transport = httpx.AsyncHTTPTransport(verify=ssl_context, limits=limits, trust_env=False)
    # httpx does not take a network backend; its pool does. Same pool settings, our backend.
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=ssl_context,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=backend,
    )
    return transport


class PerOriginTransport(httpx.AsyncBaseTransport):
    """One small guarded connection pool per origin (scheme, host, port) instead of one large shared pool.

    httpcore's pool re-examines every pooled connection each time it hands one out, so its cost per request
    grows with the pool (encode/httpx#3215); with the per-host cap as the pool size, that cost stays small.
    """

    def __init__(self, per_origin: int, host_map: Mapping[str, str] | None = None, allow_private: bool = False):
        self._limits = httpx.Limits(max_connections=per_origin, max_keepalive_connections=per_origin)
        self._backend = GuardedBackend(host_map, allow_private)
        self._ssl = httpx.create_ssl_context(trust_env=False)
        self._pools: dict[tuple[bytes, bytes, int | None], httpx.AsyncHTTPTransport] = {}

    def _pool(self, url: httpx.URL) -> httpx.AsyncHTTPTransport:
        origin = (url.raw_scheme, url.raw_host, url.port)
        pool = self._pools.get(origin)
        if pool is None:
            pool = self._pools[origin] = guarded_transport(self._limits, self._backend, self._ssl)
        return pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._pool(request.url).handle_async_request(request)

    async def aclose(self) -> None:
        for pool in self._pools.values():
            await pool.aclose()
        self._pools.clear()
