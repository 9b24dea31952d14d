#!/usr/bin/env python3
"""Writes tests/data/safetensors_fixture.safetensors: a safetensors file that sluice did not write, laid out
as Hugging Face's reference implementation lays it out (data ordered by itemsize then name, the header's
entries in data order, "__metadata__" first, compact JSON padded with spaces to a multiple of 8 bytes).
tests/ops/safetensors_test.cpp holds the values written here. Standard library only; run it from anywhere:

    python3 scripts/safetensors_fixture.py
"""
import json
import struct
from pathlib import Path


def bf16(x):
    """bfloat16 bits of x (the values below are exact in bfloat16, so truncation is exact)."""
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16


# name: (dtype, shape, struct format of one element, flat values)
TENSORS = {
    "weight": ("F32", [2, 3], "f", [0.5, -1.25, 3.0, 100.0, -0.0, 7.75]),
    "bias": ("F16", [3], "e", [1.0, -2.5, 65504.0]),
    "bf": ("BF16", [2, 2], "H", [bf16(v) for v in (1.0, -3.5, 0.15625, 256.0)]),
    "scalar": ("F64", [], "d", [3.141592653589793]),
    "ids": ("I64", [4], "q", [0, -1, 2**40, -(2**63)]),
    "big": ("U64", [2], "Q", [2**64 - 1, 12345678901234]),
    "i32": ("I32", [2, 2], "i", [1, -2, 2**31 - 1, -(2**31)]),
    "u32": ("U32", [1, 2], "I", [2**32 - 1, 7]),
    "i16": ("I16", [2], "h", [-32768, 5]),
    "u16": ("U16", [2], "H", [65535, 1]),
    "i8": ("I8", [3], "b", [-128, 127, 0]),
    "counts": ("U8", [2, 2], "B", [0, 255, 7, 128]),
    "mask": ("BOOL", [3], "B", [1, 0, 1]),
    "empty": ("I32", [0, 2], "i", []),
}
ITEMSIZE = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2,
            "U16": 2, "I8": 1, "U8": 1, "BOOL": 1}
METADATA = {"format": "pt", "writer": "scripts/safetensors_fixture.py"}


def main():
    header = {"__metadata__": METADATA}
    data = b""
    for name in sorted(TENSORS, key=lambda n: (-ITEMSIZE[TENSORS[n][0]], n)):
        dtype, shape, fmt, values = TENSORS[name]
        blob = struct.pack("<%d%s" % (len(values), fmt), *values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    out = Path(__file__).resolve().parent.parent / "tests" / "data" / "safetensors_fixture.safetensors"
    out.write_bytes(struct.pack("<Q", len(h)) + h + data)
    print("wrote", out, len(h), "header bytes,", len(data), "data bytes")


if __name__ == "__main__":
    main()
