"""In-sample passes of a fitted softmax attention regression (fitted and leave-one-out values)."""

from __future__ import annotations

import math

import torch

from attnreg._typing import FloatArray
from attnreg.softmax.fused import ChunkRunner
from attnreg.softmax.landmarks import Landmarks, landmark_keys, landmark_outputs
from attnreg.softmax.options import TASK_BYTES, Options, choose_chunk
from attnreg.softmax.topk import effective_neighbours, nearest, search_map, topk_outputs
from attnreg.softmax.train import outputs, project

__all__ = ["in_sample"]


def in_sample(
    theta: torch.Tensor, alpha: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
    opts: Options, mask: bool, runner: ChunkRunner, landmarks: Landmarks | None,
) -> tuple[FloatArray, float]:
    """Attention part (N,) of the training rows' fitted values, leave-one-out with ``mask``,
    and for a top-k fit the rows' mean effective number of neighbours (1 / Σ w²; else NaN).

    Parameters
    ----------
    theta : Tensor, (M, P, r)
        The factors. alpha : Tensor, (M,) the mixture weights.
    keys : Tensor, (N, P)
        Standardised training rows. values : Tensor, (N,) their values.
    landmarks : Landmarks or None
        The landmark keys of ``keys="landmarks"``, else every row is a key.
    """
    n_keys = min(keys.shape[0], opts.key_block) if landmarks is None else landmarks.counts.shape[0]
    if opts.keys == "top_k":
        n_keys = opts.n_keys * (keys.shape[1] + 2)
    chunk = choose_chunk(None, opts.heads, keys.shape[0], n_keys, 8, TASK_BYTES)
    eff = math.nan
    with torch.no_grad():
        z, bias = project(keys, theta, opts.kernel)
        if opts.keys == "top_k":  # each row's k nearest rows in the final metric
            amap, _ = search_map(theta, alpha)
            nbr = nearest(keys, keys, amap, opts.n_keys, exclude_self=mask, runner=runner)
            heads_out = topk_outputs(runner, z, z, bias, values, nbr, chunk=chunk)
            eff = float(effective_neighbours(runner, z, z, bias, alpha, nbr, chunk=chunk).mean())
        elif landmarks is not None:
            lm = landmarks.tensors(values.cpu().numpy(), keys.device)
            zk, kb = landmark_keys(lm, theta, opts.kernel)
            heads_out = landmark_outputs(runner, z, zk, kb, lm, chunk=chunk, training=mask)
        else:
            heads_out = outputs(runner, z, z, bias, values, mask_self=mask, chunk=chunk,
                                score_dtype=torch.float64, key_block=opts.key_block)
    return (alpha @ heads_out).cpu().numpy(), eff
