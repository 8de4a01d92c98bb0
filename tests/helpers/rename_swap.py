#!/usr/bin/env python3
"""Exchanges two paths again and again with renameat2(RENAME_EXCHANGE), as
an attacker racing a reader would, until SECONDS have passed or it is
killed; then writes the number of exchanges to COUNT_FILE.

    rename_swap.py A B SECONDS COUNT_FILE
"""
import ctypes
import ctypes.util
import os
import signal
import sys
import time

AT_FDCWD = -100
RENAME_EXCHANGE = 2


def main():
    a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
    seconds, count_file = float(sys.argv[3]), sys.argv[4]
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    renameat2 = libc.renameat2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                          ctypes.c_char_p, ctypes.c_uint]
    n = 0
    stop = [False]

    def on_term(_sig, _frm):
        stop[0] = True

    signal.signal(signal.SIGTERM, on_term)
    end = time.monotonic() + seconds
    while not stop[0]:
        if renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
            err = ctypes.get_errno()
            sys.exit("renameat2: " + os.strerror(err))
        n += 1
        if n % 1000 == 0 and time.monotonic() > end:
            break
    with open(count_file, "w") as f:
        f.write("%d\n" % n)


if __name__ == "__main__":
    main()
