"""Next-token logits: the full forward pass at the last position, or the direct
path (embedding → output head, no blocks); softmax over the whole vocabulary."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from embviz.core.errors import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.similarity import check_k

MAX_TEXT_CHARS = 200_000  # tokenising more than this only to drop it would stall the worker


@dataclass(frozen=True)
class TokenScore:
    id: int
    token: str  # readable label
    logit: float
    prob: float  # softmax over the whole vocabulary at the chosen temperature
    text: str = ""  # the token's exact text, e.g. to append it to a prompt

    def as_dict(self) -> dict:
        return {"id": self.id, "token": self.token, "logit": self.logit, "prob": self.prob}


@dataclass
class LogitsResult:
    tokens: list[tuple[int, str]]  # what the model sees, (id, label)
    results: list[TokenScore]
    path: str  # "full" or "direct"
    temperature: float
    truncated: int = 0  # tokens dropped from the start to fit the context
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "tokens": [label for _, label in self.tokens],
            "token_ids": [i for i, _ in self.tokens],
            "results": [r.as_dict() for r in self.results],
            "path": self.path,
            "temperature": self.temperature,
            "truncated": self.truncated,
            "notes": self.notes,
        }


def check_temperature(temperature: float) -> float:
    t = float(temperature)
    if not math.isfinite(t) or t <= 0:
        raise EmbvizError(f"Temperature must be a positive number (got {temperature}); 1.0 leaves the logits as they are.")
    return t


def direct_logits(model: EmbeddingModel, vector: torch.Tensor) -> torch.Tensor:
    """logits = head · h (+ bias): the output layer alone, for any vector h (seed 004)."""
    h = torch.as_tensor(vector, dtype=torch.float32, device=model.device).flatten()
    if h.numel() != model.dim:
        raise EmbvizError(f"The vector has {h.numel()} values; this model's width is {model.dim}.")
    logits = model.output_head @ h
    if model.head_bias is not None:
        logits = logits + model.head_bias
    return logits


def softmax(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    return torch.softmax(logits.float() / check_temperature(temperature), dim=-1)


def rank_logits(model: EmbeddingModel, logits: torch.Tensor, k: int, temperature: float) -> list[TokenScore]:
    k = check_k(k, model.vocab_size)
    probs = softmax(logits, temperature)
    values, ids = torch.topk(torch.where(torch.isnan(logits), -torch.inf, logits.float()), k)
    return [
        TokenScore(int(i), model.vocab.label(int(i)), float(v), float(probs[int(i)]), model.vocab.texts[int(i)])
        for v, i in zip(values.tolist(), ids.tolist())
    ]


def next_token_logits(
    model: EmbeddingModel, text: str, k: int = 10, temperature: float = 1.0, direct: bool = False
) -> LogitsResult:
    """Top-k next-token logits and probabilities after `text`."""
    check_k(k, model.vocab_size)
    temperature = check_temperature(temperature)
    if not text or not text.strip():
        raise EmbvizError("Type some text first: the model predicts the token that comes after it.")
    if not model.vocab.has_text_encoder:
        raise EmbvizError("Next-token logits are off: this model has no tokenizer, so typed text cannot become tokens.")
    notes: list[str] = []
    if len(text) > MAX_TEXT_CHARS:
        notes.append(f"Only the last {MAX_TEXT_CHARS:,} characters were read.")
        text = text[-MAX_TEXT_CHARS:]
    ids = model.vocab.encode_for_model(text)
    if not ids:
        raise EmbvizError("The text produced no tokens.")
    truncated = 0
    if model.context_length and len(ids) > model.context_length:
        truncated = len(ids) - model.context_length
        ids = ids[truncated:]
        notes.append(f"The text is longer than the model's context of {model.context_length:,} tokens: "
                     f"the first {truncated:,} tokens were dropped.")
    use_direct = direct or model.kind == "embedding+linear"
    if model.kind == "embedding+linear" and not direct:
        notes.append("This model has no blocks between embedding and head: the logits depend only on the last token.")
    with torch.inference_mode():
        if use_direct:
            logits = direct_logits(model, model.table[ids[-1]])
        else:
            lm = model.language_model()
            try:
                logits = lm.last_logits(ids)
            except torch.OutOfMemoryError as exc:
                raise EmbvizError("The device ran out of memory running the model on this text; try shorter text.") from exc
            logits = logits.to(model.device)
    if not bool(torch.isfinite(logits).any()):
        raise EmbvizError("The model produced no finite logits for this text (NaN or Inf everywhere).")
    return LogitsResult(
        tokens=[(i, model.vocab.label(i)) for i in ids],
        results=rank_logits(model, logits, k, temperature),
        path="direct" if direct else "full",
        temperature=temperature,
        truncated=truncated,
        notes=notes,
    )
