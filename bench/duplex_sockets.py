#!/usr/bin/env python3
"""Plain sockets doing what a 2-rank allgather does on the wire: both ends
send BYTES and receive BYTES at once, one connection per direction (as smd's
tcp transport), after a 1-byte handshake per iteration.

  duplex_sockets.py listen|dial ADDR PORT BYTES ITERS

The dialer prints one line per iteration: the seconds it took."""
import selectors
import socket
import sys
import time

role, addr, port, nbytes, iters = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(
    sys.argv[4]), int(sys.argv[5])


def nodelay(s):
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


if role == "listen":
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(2)
    inc = nodelay(ls.accept()[0])
    out = nodelay(ls.accept()[0])
else:
    for _ in range(200):
        try:
            out = socket.create_connection((addr, port))
            break
        except OSError:
            time.sleep(0.05)
    nodelay(out)
    inc = nodelay(socket.create_connection((addr, port)))
data = memoryview(bytearray(nbytes))
sink = memoryview(bytearray(nbytes))
for _ in range(iters):
    for s in (out, inc):
        s.setblocking(True)
    out.sendall(b"x")
    inc.recv(1)
    for s in (out, inc):
        s.setblocking(False)
    start = time.perf_counter()
    sent = got = 0
    sel = selectors.DefaultSelector()
    sel.register(out, selectors.EVENT_WRITE)
    sel.register(inc, selectors.EVENT_READ)
    while sent < nbytes or got < nbytes:
        for key, _ in sel.select():
            try:
                if key.fileobj is out:
                    sent += out.send(data[sent:])
                    if sent == nbytes:
                        sel.unregister(out)
                else:
                    n = inc.recv_into(sink[got:])
                    if n == 0:
                        sys.exit("the other end closed")
                    got += n
            except BlockingIOError:
                pass
    sel.close()
    if role == "dial":
        print(time.perf_counter() - start, flush=True)
