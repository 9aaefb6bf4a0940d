"""A sweep's chunk files: its lanes cut into chunks, each chunk saved atomically with its
identity (lane range, a digest of its lanes' values and of the manifest) and a digest of its
results, and checked when it is loaded (:class:`Chunks`)."""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path

import jax.numpy as jnp
import numpy as np

#: Names of the identity entries every chunk file carries (see ``run_sweep``): its lane range,
#: the digest of its lanes' values and the manifest, and the digest of its results.
_LANES, _DIGEST, _VALUES = "__chunk_lanes__", "__chunk_digest__", "__chunk_values__"


def _values_digest(out):
    """sha256 of a chunk's results: every output's name, dtype, shape and bytes."""
    digest = hashlib.sha256()
    for k in sorted(out):
        v = np.ascontiguousarray(out[k])
        digest.update(f"{k}|{v.dtype.str}|{v.shape}".encode())
        digest.update(v.tobytes())
    return digest.hexdigest()
class Chunks:
    """A sweep's lanes cut into chunks of ``chunk`` lanes (the last padded by repeating its
    last lane), and their files in ``folder`` (None: in memory).

    Every chunk file carries its lane range and a digest of its lanes' values and of the
    manifest, so that a file from another grid, another chunk or another sweep is never
    taken for this one."""

    def __init__(self, lanes, chunk, manifest):
        total = next(iter(lanes.values())).size
        self.chunk, self.count, self.manifest, self.folder = chunk, -(-total // chunk), manifest, None
        self.padded = {k: np.concatenate([v, np.full(self.count * chunk - total, v[-1])]) for k, v in lanes.items()}

    def points(self, i: int) -> dict:
        """Chunk ``i``'s lane values, ``{name: (chunk,) array}``."""
        return {k: jnp.asarray(v[i * self.chunk : (i + 1) * self.chunk]) for k, v in self.padded.items()}

    def file(self, i: int) -> Path | None:
        return None if self.folder is None else self.folder / f"chunk_{i:06d}.npz"

    def identity(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """``(lane range, digest)`` that chunk file ``i`` must carry."""
        digest = hashlib.sha256(json.dumps(self.manifest, sort_keys=True).encode())
        for k, v in self.padded.items():
            digest.update(k.encode())
            digest.update(np.ascontiguousarray(v[i * self.chunk : (i + 1) * self.chunk]).tobytes())
        return np.array([i * self.chunk, (i + 1) * self.chunk]), np.array(digest.hexdigest())

    def save(self, i: int, out: dict) -> None:
        """Write chunk ``i``'s outputs atomically (a uniquely named temporary file, renamed)."""
        file = self.file(i)
        tmp = file.with_name(f"{file.stem}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp.npz")  # type: ignore[union-attr]
        lanes_range, digest = self.identity(i)
        np.savez(tmp, **out, **{_LANES: lanes_range, _DIGEST: digest, _VALUES: np.array(_values_digest(out))})  # type: ignore[arg-type]  # array keyword arguments of savez
        os.replace(tmp, file)  # type: ignore[arg-type]

    def load(self, i: int) -> dict:
        """Chunk ``i``'s outputs from its file, checked against its identity.

        Raises:
            ValueError: naming the file: unreadable, without identity, of other lanes (renamed
                or swapped), of another sweep, of another chunk size, or whose results were
                changed after it was written.
        """
        file = self.file(i)
        lanes_expected, digest_expected = self.identity(i)
        try:
            with np.load(file) as data:  # type: ignore[arg-type]
                out = {k: data[k] for k in data.files}
        except (OSError, ValueError, EOFError) as exc:
            raise ValueError(f"{file}: not a readable chunk file ({exc}); delete it to compute it again") from None
        lanes_found, digest_found, values_found = out.pop(_LANES, None), out.pop(_DIGEST, None), out.pop(_VALUES, None)
        if lanes_found is None or digest_found is None or values_found is None:
            raise ValueError(f"{file} carries no chunk identity (written by an older jaxfriction?); delete it or "
                             f"use another out_dir")
        if not np.array_equal(lanes_found, lanes_expected):
            raise ValueError(f"{file} holds lanes {lanes_found.tolist()}, but chunk {i} is lanes "
                             f"{lanes_expected.tolist()}: chunk files were renamed or swapped")
        if str(digest_found) != str(digest_expected):
            raise ValueError(f"{file} belongs to another sweep (its lanes' values or the sweep's arguments differ); "
                             f"delete it or use another out_dir")
        if any(np.shape(v)[:1] != (self.chunk,) for v in out.values()):
            raise ValueError(f"{file} does not hold {self.chunk} lanes per output")
        if str(values_found) != _values_digest(out):
            raise ValueError(f"{file}: its results do not match the digest written with them (the file was changed "
                             f"after the sweep wrote it); delete it to compute the chunk again")
        return out
