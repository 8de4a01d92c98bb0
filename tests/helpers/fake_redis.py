#!/usr/bin/env python3
"""A misbehaving Redis server on 127.0.0.1 for the client's fault tests.

    fake_redis.py MODE AFTER PORT_FILE

Answers the first AFTER commands of each connection like an empty Redis
(nil to GET/HGET, 0 to ZCARD, an empty array to ZRANGE/HMGET, OK
otherwise), then answers every later command according to MODE:

  drip      "$100000\\r\\n" and then one byte every 0.5 s, forever
  bigbulk   "$1073741824\\r\\n" and then bytes as fast as the client reads
  bigarray  "*2000000000\\r\\n" and then ":1\\r\\n" as fast as it reads
  longline  "+" and then "a" as fast as it reads, never a line end
  silent    nothing at all

Writes the port it listens on to PORT_FILE; runs until killed.
"""
import os
import socket
import sys
import threading
import time

CHUNK = 1 << 16


def read_command(conn, buf):
    """Reads one RESP command (an array of bulk strings); returns its words
    and the rest of the buffer, or (None, buf) when the peer closed."""
    def need(n):
        nonlocal buf
        while len(buf) < n:
            d = conn.recv(CHUNK)
            if not d:
                raise EOFError
            buf += d

    def line():
        nonlocal buf
        while b"\r\n" not in buf:
            d = conn.recv(CHUNK)
            if not d:
                raise EOFError
            buf += d
        i = buf.index(b"\r\n")
        out, buf = buf[:i], buf[i + 2:]
        return out

    try:
        head = line()
        if not head.startswith(b"*"):
            return [head], buf
        words = []
        for _ in range(int(head[1:])):
            n = int(line()[1:])
            need(n + 2)
            words.append(buf[:n])
            buf = buf[n + 2:]
        return words, buf
    except EOFError:
        return None, buf


def normal_reply(words):
    cmd = words[0].upper() if words else b""
    if cmd in (b"GET", b"HGET"):
        return b"$-1\r\n"
    if cmd in (b"ZCARD", b"INCR"):
        return b":0\r\n"
    if cmd in (b"ZRANGE", b"HMGET"):
        return b"*0\r\n"
    return b"+OK\r\n"


def misbehave(conn, mode):
    if mode == "drip":
        conn.sendall(b"$100000\r\n")
        while True:
            conn.sendall(b"x")
            time.sleep(0.5)
    elif mode == "bigbulk":
        conn.sendall(b"$1073741824\r\n")
        block = b"x" * CHUNK
        for _ in range((1 << 30) // CHUNK):
            conn.sendall(block)
        conn.sendall(b"\r\n")
    elif mode == "bigarray":
        conn.sendall(b"*2000000000\r\n")
        block = b":1\r\n" * (CHUNK // 4)
        while True:
            conn.sendall(block)
    elif mode == "longline":
        conn.sendall(b"+")
        block = b"a" * CHUNK
        while True:
            conn.sendall(block)
    elif mode == "silent":
        while conn.recv(CHUNK):
            pass


def serve(conn, mode, after):
    buf = b""
    try:
        for _ in range(after):
            words, buf = read_command(conn, buf)
            if words is None:
                return
            conn.sendall(normal_reply(words))
        words, buf = read_command(conn, buf)
        if words is not None:
            misbehave(conn, mode)
    except (BrokenPipeError, ConnectionResetError, OSError):
        pass
    finally:
        conn.close()


def main():
    mode, after, port_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.rename(port_file + ".tmp", port_file)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn, mode, after),
                         daemon=True).start()


if __name__ == "__main__":
    main()
