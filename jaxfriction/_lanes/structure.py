"""What a sweep's traced and compiled programs are keyed by: the lane's structure.

A sweep's pieces, its executors' checks and its compiled programs depend on the lane's
structure only (its static parts, its arrays' shapes and dtypes, the default float type), not
on the arrays' values. Planning and running one sweep asks for that key several times, and a
small sweep is done in milliseconds, so the key is built to be cheap to ask for again
(:func:`remembered` keeps answers under it):
:func:`structure` remembers the latest lane's answer (a lane is immutable) and answers the
first of equal keys (the caches keyed by it compare by identity), and :class:`HashedOnce`
hashes an equinox module once (hashing one walks its fields, comparing two walks both).
"""

from __future__ import annotations

import collections
import weakref
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp


class HashedOnce:
    """``value`` (hashable) with its hash computed once; equal to another ``HashedOnce`` of an
    equal value. ``hash`` raises ``TypeError`` for an unhashable value, as ``hash(value)`` does.

    Args:
        value: e.g. the static parts of an equinox module (``eqx.partition``).
    """

    __slots__ = ("hash", "value")

    def __init__(self, value):
        self.value, self.hash = value, None

    def __hash__(self) -> int:
        if self.hash is None:
            self.hash = hash(self.value)
        return self.hash

    def __eq__(self, other) -> bool:
        return self is other or (isinstance(other, HashedOnce) and hash(self) == hash(other)
                                 and bool(self.value == other.value))


def structure(lane) -> tuple:
    """What a lane's traced form depends on: its static parts (a :class:`HashedOnce`), its
    arrays' tree structure, shapes and dtypes, and the default float type.

    The latest lane's answer is kept (by identity, with the float type, which the 64-bit
    switch changes), so the checks, the pieces and the run of one plan build it once.

    Args:
        lane: an equinox module (a sweep's :class:`~jaxfriction._lanes.program.Lane`).

    Returns:
        A hashable tuple (its hash raises ``TypeError`` where the static parts are unhashable).
    """
    float_type = str(jnp.result_type(float))
    ref, kept_type, key = _LATEST
    if ref is not None and ref() is lane and kept_type == float_type:
        return key
    dynamic, static = eqx.partition(lane, eqx.is_array)
    key = (HashedOnce(static), jax.tree.structure(dynamic), float_type,
           tuple((jnp.shape(x), str(jnp.result_type(x))) for x in jax.tree.leaves(dynamic)))
    # the first equal key seen stands for every later one: the caches keyed by it then find
    # theirs by identity, without comparing two modules field by field
    new = key
    key = remembered(_INTERNED, new, lambda: new)
    try:
        _LATEST[:] = [weakref.ref(lane), float_type, key]
    except TypeError:  # a lane that cannot be weakly referenced: not kept
        pass
    return key


def remembered(cache: collections.OrderedDict, key, compute: Callable[[], Any], size: int = 64) -> Any:
    """``compute()``, kept in ``cache`` under ``key`` (a :func:`structure` with more parts):
    a later call with an equal key returns it, the latest ``size`` answers are kept, and an
    unhashable key (unhashable static parts) computes it every time.

    Args:
        cache: the cache (an ``OrderedDict``, latest last).
        key: hashable, or raising ``TypeError`` when hashed.
        compute: the answer's function of no arguments.
        size: answers kept.
    """
    try:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    except TypeError:  # unhashable static parts: not remembered
        return compute()
    cache[key] = answer = compute()
    while len(cache) > size:
        cache.popitem(last=False)
    return answer


#: The latest lane asked of :func:`structure`: a weak reference, the float type, the answer.
_LATEST: list = [None, None, None]
#: The keys :func:`structure` has answered, each the first of its equals (at most 64, latest last).
_INTERNED: collections.OrderedDict = collections.OrderedDict()
