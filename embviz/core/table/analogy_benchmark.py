"""The Google analogy benchmark (questions-words.txt), evaluated with batched
matrix products: accuracy with inputs excluded (word2vec's rule) and included.

The window runs it in a child process (`evaluate_in_child`): its token look-ups, id lists,
allocations and collector passes held the window's interpreter lock for up to a quarter
of a second at a time."""

from __future__ import annotations

from typing import Any

import tempfile
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from embviz.core.device import every_idle_core
from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.model import EmbeddingModel
from embviz.core.resources import asset
from embviz.core.table.results import BenchmarkResult, Miss, SectionScore
from embviz.core.table.similarity import unit_table

DEFAULT_FILE = asset("analogies", "questions-words.txt")
MAX_MISSES = 500
TENSOR_BLOCK = 256  # questions per torch.tensor call: a few milliseconds each
SCORES = 1 << 27  # scores per batch (512 MB of float32): 1,024 questions over 2M rows would take 8 GB
WIDE_PRODUCTS = 1e10  # multiply-adds from which the products use every core the window leaves idle
REPORT_EVERY_S = 0.1  # the child writes its progress at most this often


@dataclass
class Question:
    section: str
    words: tuple[str, str, str, str]  # a is to b as c is to d


def read_questions(path: Path | str | None = None) -> list[Question]:
    path = Path(path) if path else DEFAULT_FILE
    try:
        text = path.read_text(encoding="utf-8", errors="strict")
    except FileNotFoundError as exc:
        raise EmbvizError(f"No such analogy file: {path}") from exc
    except UnicodeDecodeError as exc:
        raise EmbvizError(f"{path.name} is not UTF-8 text (bad byte at offset {exc.start}).") from exc
    questions: list[Question] = []
    section = "(none)"
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith(":"):
            section = line[1:].strip()
            continue
        parts = line.split()
        if len(parts) == 4:
            questions.append(Question(section, (parts[0], parts[1], parts[2], parts[3])))
    if not questions:
        raise EmbvizError(f"{path.name} holds no analogy questions (lines of four words).")
    return questions


def token_form(model: EmbeddingModel, word: str) -> int | None:
    """The single token for a word as it appears mid-sentence, or None."""
    if model.vocab.space_prefixed:
        return model.vocab.id_of(" " + word)
    return model.vocab.id_of(word)


def _variant_table(model: EmbeddingModel, rows: list[tuple[int, int, int, int]]) -> torch.Tensor:
    """Each question's three inputs and all their case and space variants, padded with the
    question's own first input (already excluded): (questions, width) ids."""
    from embviz.core.table.analogy import variants_of

    lists = [sorted({v for i in row[:3] for v in variants_of(model, i)}) for row in rows]
    width = max(len(v) for v in lists)
    return _id_tensor([v + [row[0]] * (width - len(v)) for v, row in zip(lists, rows)])


def _id_tensor(rows: list[Any]) -> torch.Tensor:
    """torch.tensor of lists of ids, a block at a time: one call over every question holds
    the interpreter lock for a frame or more, and the window's event loop waits for it."""
    return torch.cat([torch.tensor(rows[at:at + TENSOR_BLOCK], dtype=torch.long)
                      for at in range(0, len(rows), TENSOR_BLOCK)])


def _argmax(scores: torch.Tensor) -> torch.Tensor:
    """Each row's first maximum. On the CPU numpy's, vectorised: 7× quicker than torch's at
    67 × 2M, where torch's three passes took a third as long as the product itself."""
    if scores.device.type == "cpu":
        return torch.from_numpy(scores.numpy().argmax(axis=1))
    return scores.argmax(dim=1)


def _best_without(scores: torch.Tensor, best: torch.Tensor, banned: torch.Tensor) -> torch.Tensor:
    """Each row's argmax once its `banned` ids (already -inf in `scores`) are out. A row whose
    best was not banned keeps it (still its first maximum, as argmax picks), so only the
    other rows are searched again: over 2M rows each full pass costs a tenth of the product."""
    redo = (best[:, None] == banned).any(dim=1).nonzero().flatten()
    if not redo.numel():
        return best
    best = best.clone()
    if scores.device.type == "cpu":  # row by row, views: no copy of the rows
        rows = scores.numpy()
        for i in redo.tolist():
            best[i] = int(rows[i].argmax())
    else:
        best[redo] = scores.index_select(0, redo).argmax(dim=1)
    return best


def evaluate(
    model: EmbeddingModel,
    questions: list[Question],
    batch: int = 1024,
    progress: ProgressFn = no_progress,
) -> BenchmarkResult:
    """Accuracy of 3CosAdd (d = b − a + c) over the questions whose four words are single tokens."""
    sections: dict[str, SectionScore] = {}
    rows: list[tuple[int, int, int, int]] = []
    row_sections: list[str] = []
    lowercased = model.vocab.lowercased
    for q in questions:
        score = sections.setdefault(q.section, SectionScore(q.section, 0, 0, 0, 0))
        score.total += 1
        ids = [token_form(model, w.lower() if lowercased else w) for w in q.words]
        if all(i is not None for i in ids):
            score.kept += 1
            rows.append(tuple(ids))  # type: ignore[arg-type]
            row_sections.append(q.section)
    if rows:
        batch = max(1, min(batch, SCORES // model.vocab_size))
        units = unit_table(model)
        quads = _id_tensor(rows).to(model.device)
        hits_excluded = torch.empty(len(rows), dtype=torch.bool, device=model.device)
        hits_included = torch.empty(len(rows), dtype=torch.bool, device=model.device)
        hits_variants = torch.empty(len(rows), dtype=torch.bool, device=model.device)
        predicted = torch.empty(len(rows), dtype=torch.long, device=model.device)  # with inputs excluded
        variants = _variant_table(model, rows).to(model.device)
        # One scores buffer for every batch: a fresh 200 MB product each time was paged in
        # (and zeroed by the kernel) anew, a pass over memory the products alone do not need.
        buffer = torch.empty((min(batch, len(rows)), units.shape[0]), dtype=units.dtype, device=model.device)
        wide = model.device.type == "cpu" and len(rows) * units.numel() >= WIDE_PRODUCTS
        with torch.inference_mode(), every_idle_core() if wide else nullcontext():
            for start in range(0, len(rows), batch):
                batch_quads = quads[start : start + batch]
                a, b, c, d = batch_quads.unbind(1)
                targets = units[b] - units[a] + units[c]
                scores = torch.matmul(targets, units.T, out=buffer[: len(batch_quads)])
                best = _argmax(scores)
                hits_included[start : start + batch] = best == d
                scores.scatter_(1, batch_quads[:, :3], -torch.inf)
                best = _best_without(scores, best, batch_quads[:, :3])
                predicted[start : start + batch] = best
                hits_excluded[start : start + batch] = best == d
                banned = variants[start : start + batch]
                scores.scatter_(1, banned, -torch.inf)
                hits_variants[start : start + batch] = _best_without(scores, best, banned) == d
                progress(min(1.0, (start + batch) / len(rows)), "Answering analogy questions", None)
        names = np.array(row_sections)
        exc = hits_excluded.cpu().numpy()
        inc = hits_included.cpu().numpy()
        var = hits_variants.cpu().numpy()
        for name, score in sections.items():
            mask = names == name
            score.correct_excluded = int(exc[mask].sum())
            score.correct_included = int(inc[mask].sum())
            score.correct_variants = int(var[mask].sum())
        label = model.vocab.label
        guesses = predicted.cpu().numpy()
        misses = [Miss(row_sections[i], _four(tuple(label(t) for t in rows[i])), label(int(guesses[i])))
                  for i in np.flatnonzero(~exc)[:MAX_MISSES]]
    else:
        misses = []
    return BenchmarkResult(len(questions), list(sections.values()), lowercased, misses)


def evaluate_in_child(model: EmbeddingModel, path: Path | str | None = None,
                      progress: ProgressFn = no_progress) -> BenchmarkResult:
    """`evaluate` of the questions in `path` in a child process (embviz.core.child), which opens
    the model again by its source, as the language model's child does (a cached table is
    mapped, not copied), and checks that it is the same table. Its progress comes back
    through a file; a cancel kills it."""
    from embviz.core.child import ProgressFile, run_in_child
    from embviz.core.fingerprint import model_fingerprint

    fingerprint = model.derived("fingerprint", lambda: model_fingerprint(model))
    questions = str(Path(path) if path else DEFAULT_FILE)
    with tempfile.TemporaryDirectory(prefix="embviz-bench-") as folder:
        report = ProgressFile(folder, (0.0, "Opening the model for the benchmark"))
        result: BenchmarkResult = run_in_child(_evaluate_here, (model.source, str(model.device), fingerprint, questions,
                                                                report.path), progress, "Analogy benchmark", measure=report.measure)
    return result


def _evaluate_here(source: str, device: str, fingerprint: dict[str, Any], questions: str, report_path: str) -> BenchmarkResult:
    """Run in the child: the model opened again by its source, then `evaluate`."""
    from embviz.core import open_checkpoint
    from embviz.core.child import progress_writer
    from embviz.core.device import limit_compute_threads
    from embviz.core.fingerprint import model_fingerprint, same_model

    limit_compute_threads()
    report = progress_writer(report_path, REPORT_EVERY_S)
    model = open_checkpoint(source or None, device)
    if not same_model(fingerprint, model_fingerprint(model)):
        raise EmbvizError(f"{source or 'The default model'} no longer holds the model on screen: "
                          "open it again to run the benchmark.")
    report(0.0, "Reading the questions")
    return evaluate(model, read_questions(questions), progress=report)


def _four(words: tuple[str, ...]) -> tuple[str, str, str, str]:
    a, b, c, d = words
    return a, b, c, d
