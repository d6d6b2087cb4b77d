"""Free TCP ports on the loopback interface."""

from __future__ import annotations

import socket


def find_free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago.

    The kernel picks the port (bind to port 0); the socket is closed before returning, so another
    process could take the port before the caller binds it. Callers that start a server on it
    should be ready to retry with a fresh port.

    Returns:
        The port number.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
