"""Free ports on 127.0.0.1, for the servers a run starts on this machine."""
import socket
from typing import List


def free_ports(count: int) -> List[int]:
    """Ports the kernel hands out free on the loopback (held open together, so distinct)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()
