#!/usr/bin/env python3
"""hostile_images.py OUTDIR - seeds for the image fuzz target made from the
committed test images: kinds of damage the reader must refuse or survive
(a cubin section that runs past the end, a fatbin of very many entries,
a fatbin whose entry runs past its end)."""
import pathlib
import struct
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: hostile_images.py OUTDIR")
    images = pathlib.Path(__file__).resolve().parent.parent / "images"
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    cubin = bytearray((images / "scale_add.sm_90.cubin").read_bytes())
    shoff, = struct.unpack_from("<Q", cubin, 40)
    shentsize, shnum, names = struct.unpack_from("<HHH", cubin, 58)
    for i in range(1, shnum):
        at = shoff + i * shentsize
        if i == names or struct.unpack_from("<I", cubin, at + 4)[0] == 8:  # SHT_NOBITS
            continue
        broken = bytearray(cubin)
        struct.pack_into("<Q", broken, at + 32, len(cubin))
        (out / f"section_{i}_past_end.cubin").write_bytes(broken)
        break
    entries = b""
    for i in range(2000):
        ptx = f".version 8.0\n.target sm_90\n.visible .entry k{i}(\n)\n{{\nret;\n}}\n".encode()
        header = struct.pack("<HHIQ", 1, 0, 48, len(ptx)) + bytes(12) + struct.pack("<I", 90) + bytes(16)
        entries += header + ptx
    (out / "many_entries.fatbin").write_bytes(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entries)) + entries)
    fat = bytearray((images / "scale_add.fatbin").read_bytes())
    fat[24:26] = b"\xff\xff"  # the first entry's payload size, far past the end
    (out / "entry_past_end.fatbin").write_bytes(fat)


if __name__ == "__main__":
    main()
