"""Drawing the next token: temperature, then top-k, then top-p (nucleus), as transformers'
`generate` applies its warpers (TemperatureLogitsWarper → TopKLogitsWarper →
TopPLogitsWarper), the kept set renormalised by a softmax, and one seeded
`torch.multinomial` draw; a Step appends the drawn id to the prompt and asks again.

The filters copy transformers' arithmetic (not only its idea) so that the kept set is the
one `generate` would sample from, ties and rounding included: top-k removes what is
strictly below the k-th largest score (a tie at the k-th is kept, so more than k may
survive); top-p sorts ascending, removes the tokens whose cumulative probability is
≤ 1 − p, and always keeps the most probable one."""

from __future__ import annotations

import math
from typing import Sequence

import torch

from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.lm.logits import Prompt, check_temperature, logits_result, prompt_logits
from embviz.core.lm.results import DrawnToken, KeptToken, LogitsResult
from embviz.core.model import EmbeddingModel
from embviz.core.table.similarity import check_k

MAX_STEPS = 200  # one forward pass each: more would hold the lane for minutes
MAX_SEED = 2**63 - 1  # torch.Generator.manual_seed takes a 64-bit integer
MAX_KEPT_LISTED = 1000  # the command line's list of the kept set; its size is always given


def check_top_k(top_k: int) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
        raise EmbvizError(f"Top-k must be a whole number ≥ 0 (got {top_k}); 0 keeps every token.")
    return top_k


def check_top_p(top_p: float) -> float:
    p = float(top_p)
    if not math.isfinite(p) or not 0 < p <= 1:
        raise EmbvizError(f"Top-p must be above 0 and at most 1 (got {top_p}); 1.0 keeps every token.")
    return p


def check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise EmbvizError(f"The seed must be a whole number from 0 to {MAX_SEED:,} (got {seed}).")
    return seed


def check_steps(steps: int) -> int:
    if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= MAX_STEPS:
        raise EmbvizError(f"Steps must be a whole number from 0 to {MAX_STEPS} (got {steps}).")
    return steps


def scale(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """logits / T, as TemperatureLogitsWarper. Where that overflows (a huge logit at a tiny
    T) the largest is subtracted first: the same softmax, no inf − inf = NaN."""
    logits = logits.float()
    scores = logits / check_temperature(temperature)
    if bool(torch.isposinf(scores).any()):
        top = logits.max(dim=-1, keepdim=True).values
        scores = (logits - top) / temperature
    return scores


def top_k_filter(scores: torch.Tensor, top_k: int) -> torch.Tensor:
    """TopKLogitsWarper(top_k): scores below the k-th largest become −inf; 0 is off."""
    if check_top_k(top_k) == 0:
        return scores
    k = min(top_k, scores.size(-1))
    remove = scores < torch.topk(scores, k)[0][..., -1, None]
    return scores.masked_fill(remove, -math.inf)


def top_p_filter(scores: torch.Tensor, top_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """TopPLogitsWarper(top_p): the least probable tokens whose cumulative probability is at
    most 1 − p become −inf, the `min_tokens_to_keep` most probable never; 1.0 is off (as
    `generate` then adds no warper)."""
    if check_top_p(top_p) == 1.0:
        return scores
    sorted_scores, order = torch.sort(scores, descending=False)
    cumulative = sorted_scores.softmax(dim=-1).cumsum(dim=-1)
    remove_sorted = cumulative <= (1 - top_p)
    remove_sorted[..., -min_tokens_to_keep:] = False
    remove = remove_sorted.scatter(-1, order, remove_sorted)
    return scores.masked_fill(remove, -math.inf)


def filter_scores(logits: torch.Tensor, temperature: float, top_k: int = 0, top_p: float = 1.0) -> torch.Tensor:
    """Temperature, then top-k, then top-p: the scores `generate` samples from."""
    return top_p_filter(top_k_filter(scale(logits, temperature), top_k), top_p)


def kept_distribution(logits: torch.Tensor, temperature: float, top_k: int = 0,
                      top_p: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """(kept mask, renormalised probabilities): softmax of the filtered scores, 0 outside."""
    scores = filter_scores(logits, temperature, top_k, top_p)
    return torch.isfinite(scores), torch.softmax(scores, dim=-1)


def draw(probs: torch.Tensor, seed: int) -> int:
    """One id from `probs` by torch.multinomial with a CPU generator seeded `seed`: the same
    seed and probabilities give the same id on any device."""
    generator = torch.Generator(device="cpu").manual_seed(check_seed(seed))
    return int(torch.multinomial(probs.detach().float().cpu(), 1, generator=generator)[0])


def sample_text(
    model: EmbeddingModel, text: Prompt, k: int = 10, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0,
    seed: int = 0, steps: int = 0, direct: bool = False, load_lm: bool = True, list_kept: int = 0,
    progress: ProgressFn = no_progress,
) -> LogitsResult:
    """The top-k bars after `text` with the filter's kept set marked, and `steps` draws, each
    appended to the prompt before the next (draw i uses seed + i, so a Step of one token
    five times grows the text as one Step of five). The answer describes the distribution
    the first draw came from; `last` the last draw's, after several."""
    check_k(k, model.vocab_size)
    temperature, top_k, top_p = check_temperature(temperature), check_top_k(top_k), check_top_p(top_p)
    steps, seed = check_steps(steps), check_seed(seed)
    if seed + max(steps - 1, 0) > MAX_SEED:
        raise EmbvizError(f"The seed must leave room for {steps} draws (at most {MAX_SEED - steps + 1:,}).")
    parts: list[str | int] = [text] if isinstance(text, str) else list(text)
    first: LogitsResult | None = None
    drawn: list[DrawnToken] = []
    result: LogitsResult | None = None
    for step in range(max(steps, 1)):
        if steps:
            progress(step / steps, f"Drawing token {step + 1} of {steps}", None)
        passed = prompt_logits(model, parts, direct, load_lm)
        result = logits_result(model, passed, k, temperature)
        kept, probs = mark_kept(model, result, passed.logits, top_k, top_p, list_kept if first is None else 0)
        if steps:
            token = draw(probs, seed + step)
            drawn.append(DrawnToken(token, model.vocab.label(token), model.vocab.texts[token],
                                    float(torch.softmax(scale(passed.logits, temperature), dim=-1)[token]),
                                    float(probs[token]), seed + step, int(kept.sum())))
            parts.append(token)
        first = first or result
    assert first is not None and result is not None
    first.drawn = drawn
    first.last = result if result is not first else None
    return first


def mark_kept(model: EmbeddingModel, result: LogitsResult, logits: torch.Tensor, top_k: int, top_p: float,
              list_kept: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Write the filter's outcome into `result`; (kept mask, renormalised probabilities)."""
    kept, probs = kept_distribution(logits, result.temperature, top_k, top_p)
    before = torch.softmax(scale(logits, result.temperature), dim=-1)
    result.top_k, result.top_p = top_k, top_p
    result.kept_count = int(kept.sum())
    result.kept_mass = float(before[kept].sum())
    result.kept_probs = [float(probs[r.id]) for r in result.results]
    if list_kept:
        order = torch.argsort(probs, descending=True, stable=True)[:min(list_kept, result.kept_count)].tolist()
        result.kept = [KeptToken(i, model.vocab.label(i), model.vocab.texts[i], float(before[i]), float(probs[i]))
                       for i in order]
    return kept, probs


def grown_text(text: str, drawn: Sequence[DrawnToken]) -> str:
    """The prompt's text with the drawn tokens' texts after it."""
    return text + "".join(d.text for d in drawn)
