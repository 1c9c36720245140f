"""The t-SNE gradient for openTSNE's optimiser, with the repulsive part our own.

openTSNE's optimiser accepts any objective with its own signature. Ours keeps its
exact math (FIt-SNE's interpolation on a grid, Linderman et al. 2019: 3 Lagrange
nodes per box, boxes one unit wide, the squared Cauchy kernel convolved by FFT),
but openTSNE's repulsive term holds the GIL: late in a 49k-row run, 90–240 ms per
iteration during which the window could not repaint. Ours is index operations in
torch and FFTs in scipy.fft (CPU) or torch.fft (GPU), which all release the GIL; on
one CPU core it is 1.3–2× slower than openTSNE's C loop (docs/benchmarks.md), the
price of a window that keeps repainting. A CUDA model runs its whole t-SNE on the GPU.
The attractive term stays openTSNE's multi-threaded C on the CPU (GIL-free, and a
sparse product torch does no faster there), and moves to torch on a GPU.
"""

from __future__ import annotations

from typing import Any

from functools import lru_cache

import numpy as np
import scipy.fft
import torch

NODES_PER_BOX = 3
MIN_BOXES = 50
MAX_BOXES = 1000
EPSILON = np.finfo(np.float64).eps


@lru_cache(maxsize=None)
def _fast_box_count(boxes: int) -> int:
    """The smallest count ≥ boxes whose padded FFT length (2 · 3 · boxes) factors into small primes."""
    while 2 * NODES_PER_BOX * boxes != scipy.fft.next_fast_len(2 * NODES_PER_BOX * boxes, real=True):
        boxes += 1
    return boxes


def _lagrange_weights(u: torch.Tensor) -> torch.Tensor:
    """(…, p) weights of the p equispaced nodes (j + ½)/p of a unit box, at positions u in [0, 1]."""
    nodes = (torch.arange(NODES_PER_BOX, dtype=u.dtype, device=u.device) + 0.5) / NODES_PER_BOX
    weights = []
    for j in range(NODES_PER_BOX):
        w = torch.ones_like(u)
        for k in range(NODES_PER_BOX):
            if k != j:
                w = w * (u - nodes[k]) / (nodes[j] - nodes[k])
        weights.append(w)
    return torch.stack(weights, dim=-1)


def repulsive_gradient(y: torch.Tensor) -> tuple[torch.Tensor, float]:
    """(the repulsive part of the gradient (n, 2), Z = Σ_{i≠j} q_ij) for a 2-D embedding, float64."""
    n = y.shape[0]
    lo, hi = torch.stack(torch.aminmax(y)).tolist()  # one device round trip, not two
    span = max(hi - lo, 1e-12)
    boxes = min(_fast_box_count(max(MIN_BOXES, int(span))), MAX_BOXES)
    width = span / boxes
    side = NODES_PER_BOX * boxes  # interpolation nodes per axis, spaced width / 3 apart
    fft_len = 2 * side

    rel = (y - lo) / width
    box = rel.floor().clamp(max=boxes - 1)
    weights = _lagrange_weights(rel - box)  # (n, 2, p)
    node = box.long()[:, :, None] * NODES_PER_BOX + torch.arange(NODES_PER_BOX, device=y.device)  # (n, 2, p)
    flat = (node[:, 0, :, None] * side + node[:, 1, None, :]).reshape(n, -1)  # (n, p²)
    w = (weights[:, 0, :, None] * weights[:, 1, None, :]).reshape(n, -1)  # (n, p²)

    charges = torch.stack([torch.ones_like(y[:, 0]), y[:, 0], y[:, 1], (y * y).sum(1)])  # (4, n)
    grid = torch.zeros((4, side * side), dtype=y.dtype, device=y.device)
    grid.index_add_(1, flat.reshape(-1), (charges[:, :, None] * w[None]).reshape(4, -1))

    # The kernel on the padded grid, wrapped so that a circular convolution is the linear one.
    offsets = torch.arange(fft_len, device=y.device, dtype=y.dtype)
    offsets = torch.where(offsets < side, offsets, offsets - fft_len) * (width / NODES_PER_BOX)
    kernel = 1.0 / (1.0 + offsets[:, None] ** 2 + offsets[None, :] ** 2) ** 2
    potentials = _convolve(grid.view(4, side, side), kernel, fft_len).reshape(4, -1)

    phi = (potentials[:, flat] * w[None]).sum(-1)  # (4, n): the interpolated potentials
    sq = (y * y).sum(1)
    z = float(((1 + sq) * phi[0] - 2 * (y[:, 0] * phi[1] + y[:, 1] * phi[2]) + phi[3]).sum()) - n
    return (y * phi[0, :, None] - phi[1:3].T) / (z + EPSILON), z


def _convolve(grid: torch.Tensor, kernel: torch.Tensor, fft_len: int) -> torch.Tensor:
    """The top-left (side × side) corner of the circular convolution of the zero-padded grids
    with the kernel. On the CPU through scipy.fft: 1.4× faster than torch.fft here, and it
    releases the GIL as well."""
    side = grid.shape[-1]
    if grid.device.type == "cpu":
        padded = np.zeros((grid.shape[0], fft_len, fft_len))
        padded[:, :side, :side] = grid.numpy()
        out = scipy.fft.irfft2(scipy.fft.rfft2(padded) * scipy.fft.rfft2(kernel.numpy()), s=(fft_len, fft_len))
        return torch.from_numpy(np.ascontiguousarray(out[:, :side, :side]))
    on_device = torch.zeros((grid.shape[0], fft_len, fft_len), dtype=grid.dtype, device=grid.device)
    on_device[:, :side, :side] = grid
    convolved: torch.Tensor = torch.fft.irfft2(torch.fft.rfft2(on_device) * torch.fft.rfft2(kernel), s=(fft_len, fft_len))
    return convolved[:, :side, :side]


def attractive_gradient(y: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Σ_j p_ij q_ij (y_i − y_j) over the sparse affinities, in torch (for a GPU)."""
    diff = y[rows] - y[cols]
    q = 1.0 / (1.0 + (diff * diff).sum(1))
    return torch.zeros_like(y).index_add_(0, rows, diff * (p * q)[:, None])


class TorchObjective:
    """openTSNE's `objective_function` interface, computed on `device`. The attractive
    term runs in torch too where `torch_attractive` (the default off the CPU)."""

    def __init__(self, device: torch.device | str, torch_attractive: bool | None = None) -> None:
        self.device = torch.device(device)
        self.torch_attractive = self.device.type != "cpu" if torch_attractive is None else torch_attractive
        self._sparse: tuple[Any, ...] | None = None

    def __call__(self, embedding: np.ndarray, P: Any, dof: float = 1, n_jobs: int = 1,  # noqa: N803 - openTSNE's names
                 should_eval_error: bool = False, **_: Any) -> tuple[float, np.ndarray]:
        if dof != 1:
            raise ValueError("Only the Cauchy kernel (dof = 1) is implemented.")
        points = np.asarray(embedding, dtype=np.float64)
        y = torch.from_numpy(points).to(self.device)
        negative, z = repulsive_gradient(y)
        if self.torch_attractive:
            rows, cols, p = self._on_device(P)
            gradient = (attractive_gradient(y, rows, cols, p) - negative).cpu().numpy()
            sum_p, kl = 0.0, 0.0
            if should_eval_error:
                q = 1.0 / (1.0 + ((y[rows] - y[cols]) ** 2).sum(1))
                sum_p = float(p.sum())
                kl = float((p * torch.log(p.clamp_min(EPSILON) / q)).sum())
        else:
            from openTSNE import _tsne

            gradient = (-negative).cpu().numpy()
            sum_p, kl = _tsne.estimate_positive_gradient_nn(
                P.indices, P.indptr, P.data, points, points, gradient, dof,
                num_threads=n_jobs, should_eval_error=should_eval_error,
            )
        if should_eval_error:
            kl += sum_p * np.log(z + EPSILON)
        return kl, gradient

    def _on_device(self, P: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # noqa: N803 - t-SNE's P
        """P's entries on the device, copied once. openTSNE multiplies P in place for early
        exaggeration and divides it back after, so the scale is read off its first entry."""
        if self._sparse is None or self._sparse[0] is not P:
            coo = P.tocoo()
            self._sparse = (P, float(P.data[0]),
                            torch.as_tensor(coo.row, dtype=torch.long, device=self.device),
                            torch.as_tensor(coo.col, dtype=torch.long, device=self.device),
                            torch.tensor(coo.data, dtype=torch.float64, device=self.device))  # a copy: P changes in place
        _, first, rows, cols, values = self._sparse
        scale = float(P.data[0]) / first
        return rows, cols, values if scale == 1.0 else values * scale
