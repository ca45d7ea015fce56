"""Read and check a safetensors file's header without loading (let alone unpickling) anything.

Pure core (no Django, no torch): a safetensors file is an 8-byte little-endian header length N,
N bytes of JSON ``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}``,
then the raw tensor bytes. Everything is checked against the file's real size, so a truncated or
padded file, a pickle (``torch.save``), a zip or random bytes are refused with a clear message.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import BinaryIO

DTYPE_BYTES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
               "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8}
FLOATS = frozenset({"F16", "BF16", "F32"})
MAX_HEADER = 100 * 1024 * 1024  # the safetensors library's own limit


class UploadRejected(ValueError):
    """The file is not an acceptable weights file; the message says why."""


@dataclass
class TensorInfo:
    dtype: str
    shape: tuple[int, ...]
    offsets: tuple[int, int]


@dataclass
class Header:
    tensors: dict[str, TensorInfo]
    metadata: dict[str, str] = field(default_factory=dict)
    data_bytes: int = 0


def _sniff(head: bytes) -> str:
    if head[:1] == b"\x80":
        return " It looks like a Python pickle (e.g. torch.save): pickles are never loaded, export safetensors instead."
    if head[:2] == b"PK":
        return " It looks like a zip archive (torch.save's format): export safetensors instead."
    if head[:1] in (b"{", b"["):
        return " It looks like JSON text, not a weights file."
    return ""


def read_header(fh: BinaryIO, size: int) -> Header:
    """Parse and validate the header of a safetensors file of ``size`` bytes open at ``fh``."""
    head = fh.read(8)
    if len(head) < 8 or size < 8:
        raise UploadRejected("Not a safetensors file: it is shorter than the 8-byte header length." + _sniff(head))
    n = int.from_bytes(head, "little")
    if n < 2 or n > MAX_HEADER:
        raise UploadRejected(f"Not a safetensors file: the header length field reads {n} bytes." + _sniff(head))
    if 8 + n > size:
        raise UploadRejected(f"Truncated or not a safetensors file: the header claims {n} bytes but the file has "
                             f"{size - 8} after the length field." + _sniff(head))
    raw = fh.read(n)
    if len(raw) != n:
        raise UploadRejected("Truncated file: the header could not be read in full.")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UploadRejected(f"Corrupt safetensors header: not valid JSON ({exc}).") from None
    if not isinstance(doc, dict):
        raise UploadRejected("Corrupt safetensors header: it is not a JSON object.")
    metadata = doc.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise UploadRejected("Corrupt safetensors header: __metadata__ must map strings to strings.")
    tensors: dict[str, TensorInfo] = {}
    spans = []
    for name, info in doc.items():
        if not isinstance(info, dict) or set(info) - {"dtype", "shape", "data_offsets"} or len(info) != 3:
            raise UploadRejected(f"Corrupt safetensors header: entry {name!r} is not {{dtype, shape, data_offsets}}.")
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if dtype not in DTYPE_BYTES:
            raise UploadRejected(f"Tensor {name!r} has an unknown dtype {dtype!r}.")
        if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape)):
            raise UploadRejected(f"Tensor {name!r} has an invalid shape {shape!r}.")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)
                and 0 <= offsets[0] <= offsets[1]):
            raise UploadRejected(f"Tensor {name!r} has invalid data offsets {offsets!r}.")
        expected = math.prod(shape) * DTYPE_BYTES[dtype]
        if offsets[1] - offsets[0] != expected:
            raise UploadRejected(f"Tensor {name!r}: {offsets[1] - offsets[0]} bytes stored for a {dtype} tensor of "
                                 f"shape {tuple(shape)} ({expected} bytes needed).")
        tensors[name] = TensorInfo(dtype, tuple(shape), (offsets[0], offsets[1]))
        spans.append((offsets[0], offsets[1]))
    spans.sort()
    end = 0
    for begin, stop in spans:
        if begin != end:
            raise UploadRejected("Corrupt safetensors file: tensor data overlaps or leaves holes.")
        end = stop
    data_bytes = size - 8 - n
    if end != data_bytes:
        what = "truncated" if end > data_bytes else "followed by extra bytes"
        raise UploadRejected(f"The file is {what}: the header describes {end} bytes of tensor data, "
                             f"the file holds {data_bytes}.")
    if not tensors:
        raise UploadRejected("The file holds no tensors.")
    return Header(tensors, metadata, data_bytes)


def read_header_path(path) -> Header:
    with open(path, "rb") as fh:
        return read_header(fh, os.fstat(fh.fileno()).st_size)


def check_tensors(header: Header, expected: dict[str, tuple[int, ...]], dtypes: dict[str, frozenset] | frozenset = FLOATS
                  ) -> list[str]:
    """Problems (empty when none) of the file's tensors against ``expected`` {name: shape}:
    missing, unexpected, wrong shape, dtype outside the allowed set (one set, or one per name)."""
    problems = []
    have = header.tensors
    missing = sorted(set(expected) - set(have))
    extra = sorted(set(have) - set(expected))
    if missing:
        problems.append(f"missing tensors: {', '.join(missing[:10])}{' …' if len(missing) > 10 else ''}")
    if extra:
        problems.append(f"unexpected tensors: {', '.join(extra[:10])}{' …' if len(extra) > 10 else ''}")
    for name in sorted(set(expected) & set(have)):
        shape = tuple(expected[name])
        if have[name].shape != shape:
            problems.append(f"{name}: shape {have[name].shape}, the config needs {shape}")
        allowed = dtypes.get(name, FLOATS) if isinstance(dtypes, dict) else dtypes
        if have[name].dtype not in allowed:
            problems.append(f"{name}: dtype {have[name].dtype}, expected one of {', '.join(sorted(allowed))}")
    return problems
