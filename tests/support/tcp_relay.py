"""`python tcp_relay.py HOST PORT`: relay stdin/stdout to a TCP server (an SSH ProxyCommand).

Ray's cluster launcher has no SSH port setting; a ProxyCommand reaches an sshd on any port.
"""

from __future__ import annotations

import os
import socket
import sys
import threading


def _pump_in(sock: socket.socket) -> None:
    while data := os.read(0, 65536):
        sock.sendall(data)
    sock.shutdown(socket.SHUT_WR)


def main() -> None:
    sock = socket.create_connection((sys.argv[1], int(sys.argv[2])))
    threading.Thread(target=_pump_in, args=(sock,), daemon=True).start()
    while data := sock.recv(65536):
        os.write(1, data)


if __name__ == "__main__":
    main()
