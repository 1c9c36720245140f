"""A norm made linear at one input: RMSNorm and LayerNorm (and their variants: a gain of
1 + g, no gain at all, a bias) divide by a scale taken from the vector they are given. At
the real vector x that scale is one number, so the norm is a fixed linear map there plus
its bias: the map attribution sends each write through, so that the parts add up.

Nothing is read from the class's name: the gain, the bias and whether the norm centres
are read through the module itself, and the map is checked against the module at x.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

# Relative error allowed between the linear map at x and the module's own output at x, by the
# dtype the module computes in: float32 rounding, or the 8 bits of a bfloat16 mantissa.
NORM_TOLERANCE = {torch.float32: 1e-4, torch.float64: 1e-6, torch.float16: 4e-3, torch.bfloat16: 2e-2}
EPS_NAMES = ("variance_epsilon", "eps", "epsilon", "layer_norm_eps", "layer_norm_epsilon", "rms_norm_eps")
DEFAULT_EPS = (1e-5, 1e-6, 1e-8, 1e-12, 0.0)  # what norms without an attribute hard-code


@dataclass(frozen=True)
class LinearNorm:
    """v ↦ scale ⊙ (v − mean(v) if centred else v); `bias` is added once, to the sum."""

    scale: torch.Tensor  # (D,): the gain over x's rms (or standard deviation)
    centred: bool
    bias: torch.Tensor | None

    def __call__(self, v: torch.Tensor) -> torch.Tensor:
        if self.centred:
            v = v - v.mean(-1, keepdim=True)
        return v * self.scale


def first_output(output: object) -> torch.Tensor:
    """A module's tensor output, or the first of what it returns (GPT-1's blocks return a list)."""
    return output[0] if isinstance(output, (tuple, list)) else output  # type: ignore[return-value]


def _apply(norm: torch.nn.Module, v: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return first_output(norm(v.to(like.dtype)[None])).float()[0]


def tolerance(dtype: torch.dtype) -> float:
    return NORM_TOLERANCE.get(dtype, 1e-4)


def close(a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype, scale: float | None = None) -> bool:
    """Whether a is b to the dtype's tolerance, relative to `scale` (default: b's norm)."""
    bound = tolerance(dtype) * (scale if scale is not None else float(b.norm()))
    return float((a - b).norm()) <= bound + 1e-6


def sums_to(parts: torch.Tensor, whole: torch.Tensor, dtype: torch.dtype, rounded: float) -> bool:
    """Whether `parts` (a sum of writes) is `whole` (a difference of residuals): to the
    dtype's tolerance of the write itself, beyond the rounding of residuals of norm
    `rounded` (a few units in the last place): a write a hundred times smaller than the
    residual it lands in is still checked to its own precision."""
    ulp = torch.finfo(dtype).eps if dtype.is_floating_point else 1e-7
    bound = tolerance(dtype) * float(whole.norm()) + 16 * ulp * rounded
    return float((parts - whole).norm()) <= bound + 1e-7


@torch.inference_mode()
def linearise(norm: torch.nn.Module, x: torch.Tensor) -> LinearNorm | None:
    """The norm's linear map at x (a (D,) row, in the dtype the model runs in), or None when
    it computes neither an RMSNorm nor a LayerNorm of x."""
    width = x.shape[-1]
    if width < 2:
        return None
    expected = _apply(norm, x, x)
    bias = _apply(norm, torch.zeros_like(x), x)  # 0 / sqrt(eps) = 0: what is left is the bias
    # A mean-free probe of variance 1 and one of rms 1 but mean 1 tell the kinds apart.
    probe = torch.ones(width, dtype=torch.float32, device=x.device)
    probe[1::2] = -1
    if width % 2:  # no zero entry: the gain is read at every one
        probe[-3:] = torch.tensor([1.0, 1.0, -2.0])
    probe = probe / probe.square().mean().sqrt()
    ones = torch.ones_like(probe)
    eps_values = _eps_candidates(norm)
    xf = x.float()
    for centred in (False, True):
        spread = (xf - xf.mean()) if centred else xf
        for eps in eps_values:
            # The gain, read through the module at a vector whose scale is known.
            at = probe if centred else ones
            gain = (_apply(norm, at, x) - bias) * math.sqrt(1 + eps) / at
            if not bool(torch.isfinite(gain).all()):
                continue
            linear = LinearNorm(gain / torch.sqrt(spread.square().mean() + eps), centred,
                                bias if bool(bias.abs().max() > 0) else None)
            got = linear(xf) + (linear.bias if linear.bias is not None else 0)
            if float((got - expected).norm()) <= tolerance(x.dtype) * float(expected.norm()) + 1e-6:
                return linear
    return None


def _eps_candidates(norm: torch.nn.Module) -> list[float]:
    named = [float(v) for name in EPS_NAMES if isinstance(v := getattr(norm, name, None), (int, float))]
    return named + [e for e in DEFAULT_EPS if e not in named]
