"""Next-token logits: the full forward pass at the last position, or the direct
path (embedding → output head, no blocks); softmax over the whole vocabulary."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import torch

from embviz.core.errors import EmbvizError
from embviz.core.lm.results import LogitsResult, TokenScore
from embviz.core.model import EmbeddingModel
from embviz.core.table.similarity import check_k

MAX_TEXT_CHARS = 200_000  # tokenising more than this only to drop it would stall the worker
MAX_NAMED_BAD = 5  # non-finite logits named by id in the note

# Free text, or text and token ids in order: a clicked bar appends its exact id, which
# re-tokenising its text could not give back (a byte piece decodes to "�").
Prompt = str | Sequence[str | int]


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
    logits = model.output_head.to(torch.float32) @ h
    if model.head_bias is not None:
        logits = logits + model.head_bias
    return logits


def softmax(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Probabilities at `temperature`, the largest logit subtracted first: divided by a tiny
    temperature (1e-45) the logits themselves would overflow to inf and every probability be NaN;
    their differences to the largest are ≤ 0, so they only go to −inf (probability 0)."""
    logits = logits.float()
    top = logits.max(dim=-1, keepdim=True).values
    shifted = torch.where(torch.isfinite(top), logits - top, logits)
    return torch.softmax(shifted / check_temperature(temperature), dim=-1)


def rank_logits(model: EmbeddingModel, logits: torch.Tensor, k: int, temperature: float) -> list[TokenScore]:
    """Top k by logit, with probabilities from a softmax over every finite logit."""
    k = check_k(k, model.vocab_size)
    logits = logits.float()
    probs = softmax(logits, temperature)
    values, ids = torch.topk(logits, min(k, int(torch.isfinite(logits).sum())) or 1)
    return [
        TokenScore(int(i), model.vocab.label(int(i)), float(v), float(probs[int(i)]), model.vocab.texts[int(i)])
        for v, i in zip(values.tolist(), ids.tolist())
        if math.isfinite(v)
    ]


def drop_bad_logits(logits: torch.Tensor) -> tuple[torch.Tensor, list[int], str | None]:
    """(logits with NaN and +Inf set to −Inf, their ids, a note naming them). One bad
    entry would otherwise turn every probability into NaN; −Inf is a legitimate mask."""
    bad = torch.isnan(logits) | torch.isposinf(logits)
    bad_ids = bad.nonzero().flatten().tolist()
    clean = torch.where(bad, torch.tensor(-torch.inf, device=logits.device, dtype=logits.dtype), logits) if bad_ids else logits
    if not bool(torch.isfinite(clean).any()):
        raise EmbvizError("The model produced no finite logits for this text (NaN or Inf everywhere).")
    if not bad_ids:
        return logits, [], None
    named = ", ".join(str(i) for i in bad_ids[:MAX_NAMED_BAD]) + (", …" if len(bad_ids) > MAX_NAMED_BAD else "")
    note = (f"{len(bad_ids):,} logit{'s are' if len(bad_ids) > 1 else ' is'} NaN or +Inf (id {named}): "
            "left out of the ranking and the softmax; the other probabilities are exact.")
    return clean, bad_ids, note


def encode_prompt(model: EmbeddingModel, prompt: Prompt) -> list[int]:
    """Ids as the model sees the prompt: the tokenizer's own special tokens (e.g. BOS) at
    the start, text pieces tokenised in place, token ids taken as they are."""
    ids: list[int] = []
    for part in [prompt] if isinstance(prompt, str) else prompt:
        if isinstance(part, str):
            if part:
                ids += model.vocab.encode(part) if ids else model.vocab.encode_for_model(part)
        elif 0 <= int(part) < model.vocab_size:
            ids.append(int(part))
        else:
            raise EmbvizError(f"Token id {part} is outside the vocabulary (0–{model.vocab_size - 1}).")
    return ids


def prompt_ids(model: EmbeddingModel, text: Prompt, why: str) -> tuple[list[int], int, list[str]]:
    """(ids the model sees, tokens dropped from the start to fit its context, notes)."""
    parts: list[str | int] = [text] if isinstance(text, str) else list(text)
    if not any(isinstance(p, int) or (p and p.strip()) for p in parts):
        raise EmbvizError(f"Type some text first: {why}.")
    if not model.vocab.has_text_encoder:
        raise EmbvizError("This model has no tokenizer, so typed text cannot become tokens.")
    notes: list[str] = []
    if sum(len(p) for p in parts if isinstance(p, str)) > MAX_TEXT_CHARS:
        notes.append(f"Only the last {MAX_TEXT_CHARS:,} characters were read.")
        parts = _last_chars(parts, MAX_TEXT_CHARS)
    ids = encode_prompt(model, parts)
    if not ids:
        raise EmbvizError("The text produced no tokens.")
    unknown = model.vocab.unknown_id()
    if unknown is not None and unknown in ids:
        count = ids.count(unknown)
        notes.append(f"{count:,} piece{'s' if count > 1 else ''} of the text {'have' if count > 1 else 'has'} no token "
                     f"in this vocabulary: the tokenizer reads {'them' if count > 1 else 'it'} as "
                     f"'{model.vocab.label(unknown)}'.")
    truncated = 0
    if model.context_length and len(ids) > model.context_length:
        truncated = len(ids) - model.context_length
        ids = ids[truncated:]
        notes.append(f"The text is longer than the model's context of {model.context_length:,} tokens: "
                     f"the first {truncated:,} tokens were dropped.")
    return ids, truncated, notes


def next_token_logits(
    model: EmbeddingModel, text: Prompt, k: int = 10, temperature: float = 1.0, direct: bool = False,
    load_lm: bool = True,
) -> LogitsResult:
    """Top-k next-token logits and probabilities after `text` (a string, or text and ids).
    With `load_lm=False` a full model that is not loaded yet raises LanguageModelNotLoaded."""
    check_k(k, model.vocab_size)
    temperature = check_temperature(temperature)
    return logits_result(model, prompt_logits(model, text, direct, load_lm), k, temperature)


@dataclass
class PromptLogits:
    """One forward pass: the ids seen, what was dropped to fit, notes, the clean logits."""

    ids: list[int]
    truncated: int
    notes: list[str]
    logits: torch.Tensor  # float32, NaN and +Inf already −Inf
    direct: bool  # the output head alone
    bad_ids: list[int]  # rows whose logit was NaN or +Inf


def prompt_logits(model: EmbeddingModel, text: Prompt, direct: bool = False, load_lm: bool = True) -> PromptLogits:
    """The last position's logits over the whole vocabulary after `text`."""
    ids, truncated, notes = prompt_ids(model, text, "the model predicts the token that comes after it")
    use_direct = direct or model.kind == "embedding+linear"
    if model.kind == "embedding+linear" and not direct:
        notes.append("This model has no blocks between embedding and head: the logits depend only on the last token.")
    with torch.inference_mode():
        if use_direct:
            logits = direct_logits(model, model.table[ids[-1]])
        else:
            lm = model.language_model(load=load_lm)
            try:
                logits = lm.last_logits(ids)
            except torch.OutOfMemoryError as exc:
                raise EmbvizError("The device ran out of memory running the model on this text; try shorter text.") from exc
            logits = logits.to(model.device)
    logits, bad_ids, note = drop_bad_logits(logits.float())
    if note:
        notes.append(note)
    return PromptLogits(ids, truncated, notes, logits, use_direct, bad_ids)


def logits_result(model: EmbeddingModel, pass_: PromptLogits, k: int, temperature: float) -> LogitsResult:
    ids = pass_.ids
    return LogitsResult(
        tokens=[(i, model.vocab.label(i)) for i in ids],
        results=rank_logits(model, pass_.logits, k, temperature),
        path="direct" if pass_.direct else "full",
        temperature=temperature,
        truncated=pass_.truncated,
        notes=list(pass_.notes),
        token_texts=[model.vocab.texts[i] for i in ids],
        bad_ids=list(pass_.bad_ids),
    )


def _last_chars(parts: list[str | int], limit: int) -> list[str | int]:
    """The tail of the prompt holding at most `limit` characters of text."""
    out: list[str | int] = []
    for part in reversed(parts):
        if isinstance(part, str):
            part = part[-limit:] if limit > 0 else ""
            limit -= len(part)
        out.append(part)
    return out[::-1]
