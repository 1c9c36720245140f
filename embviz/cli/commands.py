"""What each subcommand prints: the window's own handlers run on the open model, as text or JSON."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

from embviz.cli.bias_commands import BIAS_COMMANDS
from embviz.cli.steer_commands import STEER_COMMANDS


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def run_command(args: argparse.Namespace) -> tuple[Any, str]:
    """(JSON-able object, text) for one subcommand: the window's own handlers, printed."""
    from embviz.bridge import requests as rq
    from embviz.bridge.handlers import run_request

    model = run_request(None, rq.LoadModel(source=args.model, device=args.device))
    return COMMANDS[args.command](model, args, lambda request: run_request(model, request))


Ask = Callable[[Any], Any]  # runs one request on the open model


def _info(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    info = ask(rq.Info())
    share = info["embedding_share"]
    lines = [
        f"model           {info['name']}",
        f"kind            {info['kind']}",
        f"vocabulary × d  {info['vocab_size']:,} × {info['dim']:,}",
        f"tied head       {'yes' if info['tied'] else 'no'}",
        f"parameters      {info['total_params']:,}" if info["total_params"] else "parameters      unknown",
        f"embedding share {share:.1%}" if share is not None else "embedding share unknown",
        f"device, dtype   {info['device']}, {info['dtype']}",
    ] + [f"note            {n}" for n in info["notes"]]
    return info, "\n".join(lines)


def _neighbours(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    # The command line takes the token's text literally (" king" has a leading space).
    view = ask(rq.Neighbours(query=model.vocab.resolve(args.word), k=args.k, centered=args.centered,
                             hide_special=args.hide_special, by=args.by, table=args.table))
    hits = view.hits
    kind = "cosine" if args.by == "cosine" else "dot product"
    head = f"(mean-centred {kind})\n" if args.centered else ("(dot product)\n" if args.by == "dot" else "")
    return _of_table(args, {"results": [h.as_dict() for h in hits], "centered": args.centered, "by": args.by},
                     head + _hits_text(hits))


def _similarity(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    vocab = model.vocab
    score = ask(rq.Similarity(a=vocab.resolve(args.word1), b=vocab.resolve(args.word2), centered=args.centered,
                              table=args.table))
    return _of_table(args, {"score": score}, f"{score:.4f}")


def _analogy(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq
    from embviz.core.table.analogy import parse_inputs

    a, b, c = parse_inputs(model, [args.a, args.b, args.c])
    result = ask(rq.Analogy(a=a, b=b, c=c, k=args.k, exclude_inputs=not args.include_inputs, method=args.method,
                            hide_special=args.hide_special, exclude_variants=args.exclude_variants, plane=False,
                            table=args.table)).result
    ranks = "\n".join(f"  input {r.role} {r.token!s:>16}  would rank {r.rank}" for r in result.input_ranks)
    rule = ("inputs and their variants excluded; " if result.exclude_variants
            else "inputs excluded; " if result.exclude_inputs else "inputs included; ")
    return _of_table(args, result.as_dict(), _hits_text(result.results) + "\n" + rule + "without exclusion:\n" + ranks)


def _similarities(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq
    from embviz.core.table.word_pairs import DATASETS

    asked = [rq.WordPairs(path=args.pairs)] if args.pairs else [rq.WordPairs(dataset=name) for name in DATASETS]
    results = [ask(request) for request in asked]
    lines = []
    for r in results:
        lines += [f"{r.source}: Spearman {_fmt(r.spearman)}, Pearson {_fmt(r.pearson)} over {r.kept:,} of {r.total:,} pairs",
                  f"  rule: {r.rule}"]
        lines += [f"  skipped: '{s.word}' {s.reason}" for s in r.skipped_words[:args.list]]
        lines += [f"  note: {n}" for n in r.notes]
        lines += [f"  {p.labels[0]:>14} {p.labels[1]:<14} people {p.rating:5.2f}  cosine {p.cosine:7.4f}  off the line {p.residual:+.3f}"
                  for p in r.pairs[:args.list]]
    return {"results": [r.as_dict() for r in results]}, "\n".join(lines)


def _odd_one_out(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    found = ask(rq.OddOneOut(words=args.words, table=args.table))
    lines = [f"the odd one out: {found.labels[found.outsider]}", "cosine to the mean of the others:"]
    lines += [f"  {label:<16} {c:.4f}" for label, c in zip(found.labels, found.to_others)]
    return _of_table(args, found.as_dict(), "\n".join(lines))


def _with_language_model(model, ask: Ask) -> None:
    """Build the full model first, as the window does in a job of its own."""
    from embviz.bridge import requests as rq

    if model.kind == "transformer" and not model.lm_loaded:
        ask(rq.LoadLanguageModel())


def _logits(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    if not args.direct:
        _with_language_model(model, ask)
    steps = args.steps or (1 if args.sample else 0)
    sampling = bool(args.top_k or args.top_p != 1.0 or steps)
    result = ask(rq.Logits(text=args.text, k=args.k, temperature=args.temperature, direct=args.direct,
                           top_k=args.top_k, top_p=args.top_p, seed=args.seed, steps=steps,
                           list_kept=_kept_listed() if sampling else 0))
    lines = ["tokens: " + " | ".join(label for _, label in result.tokens)]
    lines += [f"note: {n}" for n in result.notes]
    kept = result.kept_probs or [None] * len(result.results)
    lines += [f"{r.id:>7}  {r.token!s:<20} logit {r.logit:9.3f}   p {r.prob:.4f}"
              + ("" if after is None else f"   kept p {after:.4f}" if after else "   dropped")
              for r, after in zip(result.results, kept)]
    data = result.as_dict()
    if sampling:
        data |= result.sampling_dict()
        lines += _sampling_lines(result)
    if args.steps:
        from embviz.core.lm.sampling import grown_text

        data["steps"] = [d.as_dict() for d in result.drawn]
        data["text"] = grown_text(args.text, result.drawn)
        lines.append(f"text: {data['text']}")
    return data, "\n".join(lines)


def _kept_listed() -> int:
    from embviz.core.lm.sampling import MAX_KEPT_LISTED

    return MAX_KEPT_LISTED


def _sampling_lines(result) -> list[str]:
    from embviz.core.lm.results import filter_phrase

    how = filter_phrase(result.top_k, result.top_p)
    lines = []
    if how:
        lines.append(f"kept {how}: {result.kept_count:,} tokens, {result.kept_mass:.4f} of the probability"
                     + (f" (the first {len(result.kept):,} in --json)" if len(result.kept) < result.kept_count else ""))
    lines += [f"drew {d.id} {d.token} (p = {d.kept_prob:.4f}{' ' + how if how else ''}; {d.prob:.4f} before; seed {d.seed})"
              for d in result.drawn]
    return lines


def _lens(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    _with_language_model(model, ask)
    result = ask(rq.Lens(text=args.text, k=args.k, final_norm=not args.raw))
    width = max(len(name) for name in result.layer_names)
    lines = [f"note: {n}" for n in result.notes]
    lines.append(" " * width + "  " + " | ".join(label for _, label in result.tokens) + "   (after each token: top guess, p)")
    lines += [f"{name:<{width}}  " + " | ".join(f"{cell[0].token} {cell[0].prob:.2f}" for cell in row)
              for name, row in zip(result.layer_names, result.top)]
    return result.as_dict(), "\n".join(lines)


def _drift(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    _with_language_model(model, ask)
    result = ask(rq.Drift(word=args.word, sentences=args.sentences, layer=args.layer, k=args.k))
    lines = [f"'{model.vocab.label(result.token_ids[0])}' in {len(result.sentences)} sentence(s); cosines per layer:",
             f"{'layer':<10} {'between':>8} {'baseline':>8}  to its static row, per sentence"]
    for name, between, base, static in zip(result.layer_names, result.between, result.baseline, result.to_static):
        lines.append(f"{name:<10} {_fmt(between):>8} {_fmt(base):>8}  " + "  ".join(f"{x:.4f}" for x in static))
    lines.append(f"nearest rows at {result.layer_names[result.neighbours_layer]}:")
    lines += [f"  {n}: " + ", ".join(f"{h.token} {h.score:.3f}" for h in hits) for n, hits in enumerate(result.neighbours, 1)]
    return result.as_dict(), "\n".join(lines)


def _attribute(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    _with_language_model(model, ask)
    result = ask(rq.Attribution(text=args.text, token=args.token, position=args.position))
    lines = ["tokens: " + " | ".join(label for _, label in result.tokens)]
    lines += [f"note: {n}" for n in result.notes]
    after = result.tokens[result.position][1]
    lines.append(f"'{model.vocab.label(result.target_id)}' after position {result.position} ('{after}'): "
                 f"logit {result.logit:.3f}, p {result.prob:.4f}; its parts:")
    lines += _parts_table(result.parts)
    ranked = result.ranked_heads()
    n = min(args.heads, len(ranked) // 2)
    lines.append(f"heads, the {n} largest and the {n} smallest parts (block, head 0-based):")
    lines += [f"  block {h.block:>3}  head {h.head:>3}  {h.value:9.3f}" for h in ranked[:n] + ranked[-n:]]
    return result.as_dict(), "\n".join(lines)


def _parts_table(parts) -> list[str]:
    """One row per block, attention and MLP side by side, then the parts of no block."""
    by_block: dict[int, dict[str, float]] = {}
    for part in parts:
        if part.block is not None:
            by_block.setdefault(part.block, {})[part.kind] = part.value
    lines = [f"  {'block':>9}  {'attention':>9}  {'mlp':>9}"]
    for block, values in by_block.items():
        if block == 0:
            lines.append(f"  {'embedding':>9}  {values['embedding']:9.3f}")
        else:
            lines.append(f"  {block:>9}  {values['attention']:9.3f}  {values['mlp']:9.3f}")
    lines += [f"  {part.kind:>9}  {part.value:9.3f}" for part in parts if part.block is None]
    lines.append(f"  {'sum':>9}  {sum(part.value for part in parts):9.3f}")
    return lines


def _attention(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    _with_language_model(model, ask)
    result = ask(rq.Attention(text=args.text, block=args.block, head=args.head, token=args.token, position=args.position))
    lines = [f"note: {n}" for n in result.notes]
    target = model.vocab.label(result.target_id)
    lines.append(f"block {result.block}'s heads by their part of the logit of '{target}' after position {result.position}: "
                 + ", ".join(f"{h.head} {h.value:.3f}" for h in result.ranking))
    labels = [label for _, label in result.tokens]
    width = max(len(label) for label in labels)
    for head, weights in zip(result.heads, result.weights):
        lines.append(f"head {head} (row: the token attending; columns in the same order)")
        lines += [f"  {label:>{width}}  " + " ".join(f"{w:.2f}" for w in row[:n + 1])
                  for n, (label, row) in enumerate(zip(labels, weights))]
    return result.as_dict(), "\n".join(lines)


def _pin(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    _with_language_model(model, ask)
    result = ask(rq.PinnedTokens(text=args.text, tokens=args.tokens, position=args.position))
    lines = [f"note: {n}" for n in result.notes]
    lines.append(f"after position {result.position} ('{result.tokens[result.position][1]}'); p and rank per layer:")
    width = max(len(name) for name in result.layer_names)
    lines.append(" " * width + "  " + " | ".join(f"{p.label:>16}" for p in result.pinned))
    lines += [f"{name:<{width}}  " + " | ".join(f"{p.probs[n]:9.4f} #{p.ranks[n]:<5}" for p in result.pinned)
              for n, name in enumerate(result.layer_names)]
    return result.as_dict(), "\n".join(lines)


def _project(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq
    from embviz.cli.map_csv import map_csv

    proj = ask(rq.Project(method=args.method, subset="words" if args.words_only else "all", first=args.limit,
                          sample=args.sample, dims=args.dims, table=args.table))
    faithful = ask(rq.Faithfulness(ids=proj.ids, coords=proj.coords, table=args.table))
    tmp = args.out + ".tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        f.writelines(map_csv(proj.ids, proj.coords, model.vocab.texts))
    os.replace(tmp, args.out)
    if faithful is not None:
        print(f"embviz: the map {faithful.caption()}. {faithful.how_measured()}", file=sys.stderr)
    summary = {"rows": int(proj.ids.size), "out": args.out, "method": proj.method, "dims": args.dims,
               "explained": proj.explained,
               "faithfulness": None if faithful is None else faithful.as_dict()}
    return _of_table(args, summary, f"wrote {proj.ids.size:,} rows to {args.out}")


def _clusters(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    of_ids = [model.vocab.resolve(word) for word in args.of]  # before the clustering: a typo fails at once
    found = ask(rq.Clusters(method=args.method, k=args.k, table=args.table))
    texts = model.vocab.texts
    clusters = [{"cluster": c, "size": cl.size, "label": cl.label, "examples": [texts[i] for i in cl.examples]}
                for c, cl in enumerate(found.clusters)]
    of = [{"token": texts[i], "id": i, "cluster": int(found.codes[i])} for i in of_ids]
    method = {"graph": "neighbour graph", "kmeans": "k-means"}[args.method]
    lines = [f"{len(clusters)} clusters ({method}, k = {args.k}) of {model.vocab_size:,} rows, largest first",
             f"{'cluster':>7}  {'size':>6}  central words"]
    lines += [f"{c['cluster']:>7}  {c['size']:>6,}  {c['label']}" for c in clusters]
    lines += [f"{model.vocab.label(o['id'])} (id {o['id']}) is in cluster {o['cluster']}: "
              f"{clusters[o['cluster']]['label']}" for o in of]
    return _of_table(args, {"k": args.k, "clusters": clusters, "of": of}, "\n".join(lines))


def _compare(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq
    from embviz.bridge.handlers import run_request

    from embviz.core.errors import EmbvizError

    if args.against and args.table == "output":
        raise EmbvizError("--against output already sets the model's input table beside its head; "
                          "--table output is for two models' heads (--with MODEL).")
    pair = ask(rq.LoadComparison(source=args.other, device=args.device, against=args.against or "model",
                                 tables=args.table))
    view = run_request(pair, rq.Compare(k=args.k, tokens=args.token))
    a, b = view.names
    lines = [f"{a} and {b} share {view.shared:,} tokens; left out: {view.only_a:,} of {a}'s rows, {view.only_b:,} of {b}'s.",
             f"rule (A = {a}, B = {b}): {view.rule}"]
    lines += [f"note: {n}" for n in view.notes]
    procrustes = "" if view.procrustes_mean is None else f", mean cosine distance after rotation {view.procrustes_mean:.4f}"
    cka = "undefined" if view.cka is None else f"{view.cka:.4f}"
    lines.append(f"k = {view.k}: mean Jaccard of the neighbour sets {view.mean_jaccard:.4f}, linear CKA {cka}{procrustes}")
    scores = lambda found: ", ".join(f"{t.label} {t.jaccard:.2f}" for t in found)  # noqa: E731
    lines += [f"least similar: {scores(view.least_similar)}", f"most similar:  {scores(view.most_similar)}"]
    labels = lambda words: " ".join(label for _, label in words) or "—"  # noqa: E731
    for t in view.tokens:
        lines += [f"{t.label} (Jaccard {t.jaccard:.2f})", f"  in both:      {labels(t.common)}",
                  f"  only in {a}: {labels(t.only_a)}", f"  only in {b}: {labels(t.only_b)}"]
    return _of_table(args, view.as_dict(), "\n".join(lines))


def _benchmark(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    result = ask(rq.Benchmark(path=args.file))
    lines = [f"{result.kept:,} of {result.total:,} questions have four single-token words"
             + (" (lower-cased: this vocabulary has no capitals)" if result.lowercased else ""),
             f"accuracy, inputs excluded {_fmt(result.accuracy_excluded)}   included {_fmt(result.accuracy_included)}"
             f"   variants excluded too {_fmt(result.accuracy_variants)}"]
    lines += [f"  {s.name:<28} {s.kept:>5}/{s.total:<5} excluded {_fmt(s.accuracy_excluded)}  included {_fmt(s.accuracy_included)}"
              f"  variants {_fmt(s.accuracy_variants)}"
              for s in result.sections]
    return result.as_dict(), "\n".join(lines)


def _export_html(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq
    from embviz.core.export_page import parse_views

    written = ask(rq.ExportPage(path=args.out, views=parse_views(args.views), text=args.text, method=args.method))
    rows = f" ({written['rows']:,} points)" if written["rows"] else ""
    return written, f"wrote {written['path']}: {written['bytes'] / 2**20:.1f} MB{rows}, opens offline"


COMMANDS: dict[str, Callable[[Any, argparse.Namespace, Ask], tuple[Any, str]]] = {
    "info": _info, "neighbors": _neighbours, "similarity": _similarity, "analogy": _analogy, "logits": _logits,
    "lens": _lens, "drift": _drift, "attribute": _attribute, "attention": _attention, "pin": _pin,
    "project": _project, "clusters": _clusters, "compare": _compare, "analogies": _benchmark,
    "similarities": _similarities, "odd-one-out": _odd_one_out,
    "export-html": _export_html, **BIAS_COMMANDS, **STEER_COMMANDS,
}


def _of_table(args: argparse.Namespace, data: dict[str, Any], text: str) -> tuple[dict[str, Any], str]:
    """A command's JSON naming the table it read; its text says so only for the head, so the
    default input table prints as it always has."""
    heading = "(the output head's rows)\n" if args.table == "output" else ""
    return data | {"table": args.table}, heading + text


def _hits_text(hits) -> str:
    return "\n".join(f"{h.id:>7}  {h.token!s:<24} {h.score:.4f}" for h in hits)


