#!/usr/bin/env python3
"""make_npy.py - writes the .npy files npy_io.test reads into OUTDIR, byte by
byte (no NumPy needed): good ones of the wrong dtype or shape, and files
hostjit must refuse."""
import pathlib
import struct
import sys


def npy(path, descr, shape, data, fortran=False):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (descr, "True" if fortran else "False", dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


def floats(n, fmt="<f"):
    return b"".join(struct.pack(fmt, 0.25 + i / 8) for i in range(n))


out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
npy(out / "f64.npy", "<f8", (33, 16), floats(33 * 16, "<d"))
npy(out / "rank3.npy", "<f4", (3, 11, 16), floats(3 * 11 * 16))
npy(out / "dim.npy", "<f4", (33, 8), floats(33 * 8))
npy(out / "big_endian.npy", ">f4", (33, 16), floats(33 * 16, ">f"))
npy(out / "fortran.npy", "<f4", (33, 16), floats(33 * 16), fortran=True)
npy(out / "complex.npy", "<c8", (33, 16), floats(33 * 16 * 2))
npy(out / "short.npy", "<f4", (33, 16), floats(33 * 16 - 1))
(out / "not_npy.npy").write_bytes(b"x,y\n1,2\n")
