"""All-pairs shortest-path distances and edge paths for Graphormer's spatial and edge encodings.

Graphormer (Ying et al. 2021, https://arxiv.org/abs/2106.05234, Sec. 3.1.2-3.1.3) biases
attention between atoms i and j by the shortest-path distance (SPD) φ(i, j) and by the
features of the edges (e_1, ..., e_K) along one shortest path i → j.  The official code runs
a Cython Floyd–Warshall (O(N³)) plus a recursive path rebuild in every epoch; we compute both
once per molecule, for many molecules at a time, with a bit-parallel breadth-first search:

* Graphs of the same size N are stacked.  Row i of a bitset holds, in ceil(N/64) uint64
  words, the set of nodes j reached from i.  One BFS level for all sources of all stacked
  graphs is  new_i = (OR over out-neighbours u of i of frontier_u) AND NOT reached_i,
  i.e. a gather plus bitwise ops over [B, N, deg, N/64] words (no N³ matrix products, no
  per-pair Python).  Node j is at distance d from i iff it first appears in row i at level d.
* The first out-neighbour u that contributed bit j at that level is the first hop of a
  shortest path i → j, because dist(u, j) = d - 1.  Distances and first-hop slots are
  accumulated in binary bit-planes and unpacked once at the end.
* Edge paths follow first hops: hop k of i → j is the first-hop edge of (cur_k, j), then
  cur_{k+1} = its head — max_hops numpy gathers for all pairs at once.

Outputs (Contract 2, docs/design.md; `max_hops`/`max_dist` come from `FeaturizerConfig`): `spd` uint8 [N*N] row-major, capped at `max_dist`,
255 = unreachable; `path` int16 [N*N, max_hops], local edge ids (columns of edge_index) of one
shortest path, first hop first, -1 after its end, beyond max_hops or when unreachable.
Edges are followed from edge_index[0] to edge_index[1] (molecules list both directions).
Memory is O(N² · max_hops) per graph whatever its connectivity (salts need no sentinel-sized
buffers), and graphs are processed in chunks of at most `_MAX_PAIRS` node pairs.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Sequence

import numpy as np

UNREACHABLE = 255
_MAX_PAIRS = 1 << 20  # node pairs per stacked chunk: bounds peak memory to ~100 MB
_MAX_EDGES = 32767  # edge ids are stored as int16


def shortest_paths(edge_index: np.ndarray, num_nodes: int, max_hops: int,
                   max_dist: int) -> tuple[np.ndarray, np.ndarray]:
    """(spd uint8 [N*N], path int16 [N*N, max_hops]) of one graph; see the module docstring."""
    return shortest_paths_many([(edge_index, num_nodes)], max_hops, max_dist)[0]


def shortest_paths_many(graphs: Sequence[tuple[np.ndarray, int]], max_hops: int,
                        max_dist: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """`shortest_paths` for many (edge_index, num_nodes) graphs, batched by size; input order."""
    if not 0 <= max_dist < UNREACHABLE:
        raise ValueError(f"max_dist must be in [0, {UNREACHABLE - 1}], got {max_dist}")
    if max_hops < 0:
        raise ValueError(f"max_hops must be >= 0, got {max_hops}")
    checked = [_check(ei, n) for ei, n in graphs]
    by_size: dict[int, list[int]] = defaultdict(list)
    for g, (_, n) in enumerate(checked):
        by_size[n].append(g)
    out: list = [None] * len(checked)
    for n, members in by_size.items():
        step = max(1, _MAX_PAIRS // max(1, n * n))
        for s in range(0, len(members), step):
            chunk = members[s:s + step]
            spd, path = _same_size([checked[g][0] for g in chunk], n, max_hops, max_dist)
            for b, g in enumerate(chunk):
                out[g] = (spd[b], path[b])
    return out


def _check(edge_index, num_nodes: int) -> tuple[np.ndarray, int]:
    ei = np.asarray(edge_index)
    if ei.size == 0:
        ei = ei.reshape(2, 0)
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise ValueError(f"edge_index must have shape [2, E], got {ei.shape}")
    if ei.shape[1] > _MAX_EDGES:
        raise ValueError(f"{ei.shape[1]} edges do not fit int16 edge ids")
    return ei, int(num_nodes)  # node-id bounds are checked per chunk


def _unpack(bits: np.ndarray, n: int) -> np.ndarray:
    """uint64 bitsets [..., W] -> uint8 0/1 [..., n] (bit j of word j // 64 is node j)."""
    u8 = np.ascontiguousarray(bits, dtype="<u8").view(np.uint8)
    return np.unpackbits(u8, axis=-1, count=n, bitorder="little")


def _add_bits(planes: list, value: int, mask: np.ndarray) -> None:
    """OR `mask` into the bit-planes of the binary number `value`."""
    for b in range(value.bit_length()):
        if (value >> b) & 1:
            planes[b] |= mask


def _planes_to_int(planes: list, n: int, dtype) -> np.ndarray:
    out = None
    for b, plane in enumerate(planes):
        v = _unpack(plane, n).astype(dtype, copy=False)
        if b:
            v <<= dtype(b)
        out = v if out is None else np.bitwise_or(out, v, out=out)
    return out


def _neighbour_slots(edge_indices: list[np.ndarray], n: int):
    """Out-neighbours and their edge ids as padded slots [B, n, K]; pad = node n, edge -1."""
    B = len(edge_indices)
    sizes = np.array([ei.shape[1] for ei in edge_indices])
    cat = np.concatenate(edge_indices, axis=1).astype(np.int64, copy=False)
    if cat.size and (cat.min() < 0 or cat.max() >= n):
        raise ValueError(f"edge_index has node ids outside [0, {n})")
    src = cat[0] + np.repeat(np.arange(B) * n, sizes)
    eid = np.arange(cat.shape[1]) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    order = np.argsort(src, kind="stable")  # stable: slot order = edge order
    src, dst, eid = src[order], cat[1][order], eid[order]
    deg = np.bincount(src, minlength=B * n)
    K = int(deg.max()) if deg.size else 0
    rank = np.arange(src.size) - (np.cumsum(deg) - deg)[src]
    nbr = np.full((B * n, K), n, dtype=np.int64)
    esl = np.full((B * n, K), -1, dtype=np.int16)
    nbr[src, rank] = dst
    esl[src, rank] = eid
    return nbr.reshape(B, n, K), esl.reshape(B, n, K), K


def _same_size(edge_indices: list[np.ndarray], n: int, max_hops: int, max_dist: int):
    """Bit-parallel BFS from every node of B graphs with n nodes each."""
    B = len(edge_indices)
    spd = np.full((B, n, n), UNREACHABLE, dtype=np.uint8)
    path = np.full((B, n * n, max_hops), -1, dtype=np.int16)
    if n == 0:
        return spd.reshape(B, 0), path
    W = (n + 63) // 64
    nbr, esl, K = _neighbour_slots(edge_indices, n)
    # Frontier rows live in [B, n + 1, W]; row n is the all-zero row the padding slots point at.
    # gather[k, b, i, w] = frontier[b, nbr[b, i, k], w]: slot-major so each slot is contiguous.
    rows = np.arange(B)[:, None, None] * (n + 1) + nbr  # [B, n, K]
    gidx = (rows.transpose(2, 0, 1)[..., None] * W + np.arange(W)).reshape(-1)
    ii = np.arange(n)
    unreached = np.full((B, n, W), ~np.uint64(0), dtype=np.uint64)
    unreached[:, ii, ii // 64] ^= np.uint64(1) << (ii % 64).astype(np.uint64)
    frontier = np.zeros((B, n + 1, W), dtype=np.uint64)
    frontier[:, :n] = ~unreached
    front_flat = frontier.reshape(-1)
    beyond_cap = unreached.copy() if max_dist == 0 else None  # unreached at level max_dist
    # Binary bit-planes: distance (levels 1..max_dist) and first-hop slot (0..K-1) per pair.
    dist_planes = [np.zeros_like(unreached) for _ in range(min(max_dist, n - 1).bit_length())]
    slot_planes = [np.zeros_like(unreached) for _ in range(max(K - 1, 0).bit_length())]
    level = 0
    while K:
        gathered = front_flat[gidx].reshape(K, B, n, W)
        # The first slot whose frontier holds bit j is the first hop towards j.
        rest = unreached.copy()
        for k in range(K):
            took = np.bitwise_and(gathered[k], rest, out=gathered[k])
            if k:
                _add_bits(slot_planes, k, took)
            rest ^= took
        new = np.bitwise_xor(unreached, rest, out=unreached)
        if not np.count_nonzero(new):
            unreached = rest
            break
        level += 1
        if level <= max_dist:  # exact distances are only stored up to the cap
            _add_bits(dist_planes, level, new)
        frontier[:, :n] = new
        unreached = rest
        if level == max_dist:
            beyond_cap = unreached.copy()

    reach = _unpack(unreached, n) == 0  # [B, n, n], includes i == j
    if dist_planes:
        np.copyto(spd, _planes_to_int(dist_planes, n, np.uint8), where=reach)
    else:
        spd[reach] = 0
    if beyond_cap is not None:
        np.copyto(spd, np.uint8(max_dist), where=_unpack(beyond_cap & ~unreached, n).view(bool))
    if max_hops == 0 or level == 0:
        return spd.reshape(B, n * n), path

    # First hop of every pair (b, i, j): its edge id and the pair (b, next, j) the path goes on
    # from; pairs without a hop (i == j, unreachable) point at themselves with edge -1.
    slot = _planes_to_int(slot_planes, n, np.uint8) if slot_planes else np.uint8(0)
    itype = np.int32 if B * n * max(n, K) < 2**31 else np.int64
    rowk = np.arange(0, B * n * K, K, dtype=itype).reshape(B, n, 1) + slot
    hop = reach & ~np.eye(n, dtype=bool)
    pair = np.arange(B * n * n, dtype=itype).reshape(B, n, n)
    bj = pair - (ii * n).astype(itype)[:, None]  # b*n*n + j
    first_edge = np.where(hop, esl.reshape(-1)[rowk], np.int16(-1))
    next_pair = np.where(hop, bj + nbr.reshape(-1)[rowk].astype(itype) * itype(n), pair)
    first_edge, next_pair = first_edge.reshape(-1), next_pair.reshape(-1)
    path[:, :, 0] = first_edge.reshape(B, n * n)
    flat = path.reshape(B * n * n, max_hops)
    for h in range(1, min(max_hops, level)):
        # path(i -> j) = first edge, then path(next -> j): hop h of p is hop h-1 of next_pair[p]
        flat[:, h] = flat[:, h - 1][next_pair]
    return spd.reshape(B, n * n), path
