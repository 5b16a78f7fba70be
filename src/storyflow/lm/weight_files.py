"""Where a model's weight files lie and what a GGUF file's header says of its size: read by
rule materialize_model (:mod:`storyflow.lm.weights`) and, before any job, by the planning
checks (:mod:`storyflow.lm.model_checks`), which need the header alone and no model library.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def model_cache() -> Path:
    """Where joined models are kept: ``$STORYFLOW_MODEL_CACHE``, else
    ``~/.cache/storyflow/models`` (shared by every working directory of the user)."""
    folder = os.environ.get("STORYFLOW_MODEL_CACHE")
    return Path(folder) if folder else Path.home() / ".cache" / "storyflow" / "models"


@dataclass(frozen=True)
class GgufLayout:
    """Where a GGUF file's parts end, read from its header alone."""

    version: int
    n_tensors: int
    header_end: int  # end of the metadata (vocabulary included) and tensor descriptions
    data_end: int  # end of the last tensor's data: the file's expected size at the least


class GgufCutShort(Exception):
    """The file ends inside its header (``at``: bytes present)."""

    def __init__(self, at: int) -> None:
        super().__init__(f"the file ends inside its header, at byte {at:,}")
        self.at = at


class _HeaderReader:
    """Reads a GGUF header front to back from the ``size`` bytes of a mapped file (``pos``:
    the next byte); a read past the end raises :class:`GgufCutShort`."""

    def __init__(self, data: mmap.mmap, size: int) -> None:
        from gguf.constants import GGUFValueType

        self.data, self.size, self.pos = data, size, 0
        self.types = GGUFValueType
        #: bytes of each fixed-width metadata value type
        self.scalar = {
            GGUFValueType.UINT8: 1,
            GGUFValueType.INT8: 1,
            GGUFValueType.BOOL: 1,
            GGUFValueType.UINT16: 2,
            GGUFValueType.INT16: 2,
            GGUFValueType.UINT32: 4,
            GGUFValueType.INT32: 4,
            GGUFValueType.FLOAT32: 4,
            GGUFValueType.UINT64: 8,
            GGUFValueType.INT64: 8,
            GGUFValueType.FLOAT64: 8,
        }

    def take(self, n: int) -> int:
        """Move past ``n`` bytes; returns where they start."""
        if self.pos + n > self.size:
            raise GgufCutShort(self.size)
        start, self.pos = self.pos, self.pos + n
        return start

    def u32(self) -> int:
        return struct.unpack_from("<I", self.data, self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack_from("<Q", self.data, self.take(8))[0]

    def string(self) -> bytes:
        n = self.u64()
        return self.data[self.take(n) : self.pos]

    def skip_value(self, kind: int) -> Any:
        """Move past one metadata value of type ``kind``: a string's bytes, a scalar as an
        int, None for an array (skipped item by item unless its items are scalars)."""
        types = self.types
        if kind == types.STRING:
            return self.string()
        if kind == types.ARRAY:
            item, count = self.u32(), self.u64()
            if item in self.scalar:
                self.take(self.scalar[types(item)] * count)
            else:
                for _ in range(count):
                    self.skip_value(item)
            return None
        if kind not in self.scalar:
            raise ValueError(f"unknown metadata value type {kind}")
        width = self.scalar[types(kind)]
        start = self.take(width)
        return int.from_bytes(self.data[start : start + width], "little")

    def alignment(self, n_kv: int) -> int:
        """Move past the ``n_kv`` metadata pairs; the tensor data's alignment in bytes
        (``general.alignment``, 32 when not given)."""
        alignment = 32
        for _ in range(n_kv):
            key = self.string()
            value = self.skip_value(self.u32())
            if key == b"general.alignment" and value:
                alignment = int(value)
        return alignment

    def tensors_end(self, n_tensors: int) -> int:
        """Move past the ``n_tensors`` tensor descriptions; the end of the furthest tensor's
        data in bytes from the data start (offset + elements / block size × type size)."""
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

        data_end = 0
        for _ in range(n_tensors):
            self.string()  # name
            dims = [self.u64() for _ in range(self.u32())]
            kind = self.u32()
            offset = self.u64()
            try:
                block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
            except (ValueError, KeyError):
                raise ValueError(f"unknown tensor type {kind}") from None
            elements = 1
            for dim in dims:
                elements *= dim
            data_end = max(data_end, offset + elements // block * type_size)
        return data_end


def gguf_layout(path: str | Path) -> GgufLayout:
    """Parse the header of a GGUF file (v2/v3) and compute where its tensor data ends.

    Reads the metadata without building it (string arrays such as the vocabulary are skipped
    string by string) and the tensor descriptions (shape, type, offset): the data of tensor t
    ends at data start + offset_t + its size (``gguf.GGML_QUANT_SIZES``). Raises
    ``GgufCutShort`` when the file ends inside the header, ``ValueError`` when the header is not
    a GGUF header this code understands.
    """
    with open(path, "rb") as handle:
        size = handle.seek(0, 2)
        if size < 24:
            raise GgufCutShort(size)
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            header = _HeaderReader(data, size)
            header.take(4)  # magic
            version = header.u32()
            if version not in (2, 3):
                raise ValueError(f"GGUF version {version} (this check reads versions 2 and 3)")
            n_tensors, n_kv = header.u64(), header.u64()
            alignment = header.alignment(n_kv)
            data_end = header.tensors_end(n_tensors)
            header_end = header.pos
    if not n_tensors:  # a vocabulary-only file: nothing follows the header, not even padding
        return GgufLayout(version, n_tensors, header_end, header_end)
    data_start = -(-header_end // alignment) * alignment
    return GgufLayout(version, n_tensors, header_end, data_start + data_end)
