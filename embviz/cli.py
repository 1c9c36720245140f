"""The command line: the same core operations as the GUI, printed as text or JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Sequence

from embviz.state.tabs import CLUSTERS_K


def _version() -> str:
    """The installed distribution's version; the package's own where it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("embviz")
    except PackageNotFoundError:
        from embviz import __version__

        return __version__


def _model_options(parser: argparse.ArgumentParser, top_level: bool = False) -> None:
    # Subcommands repeat the options without defaults, so `embviz --model M info` keeps M.
    default = (lambda value: value) if top_level else (lambda value: argparse.SUPPRESS)
    parser.add_argument("--model", default=default(None), help="folder, .gguf, .safetensors/.pt, hub id, or lesson name (spells, toy4); default: SmolLM2-135M")
    parser.add_argument("--device", default=default("auto"), help="auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps")


def _hide_special_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hide-special", action="store_true",
                        help="leave out special tokens and byte pieces that are not whole characters (the window's default)")


def _target_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--token", default=None,
                        help='the token whose logit is split, taken literally (" Paris" has a leading space); default: the top guess')
    parser.add_argument("--position", type=int, default=None,
                        help="the position whose next token is guessed, 0-based, negative from the end; default: the last")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="embviz", description="Look inside a language model's vocabulary.")
    parser.add_argument("--version", action="version", version=f"embviz {_version()}")
    _model_options(parser, top_level=True)
    parser.add_argument("--session", default=None, metavar="FILE",
                        help="open a saved session (.embviz): its model, its map as drawn, every tab's inputs")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, help_text: str, json_flag: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        _model_options(p)
        if json_flag:
            p.add_argument("--json", action="store_true", help="print one JSON object")
        return p

    add("info", "vocabulary size, width, tying, embedding share, device, dtype")
    p = add("neighbors", "nearest neighbours of a token, by cosine (or --by dot)")
    p.add_argument("word", help='a token\'s text, taken literally (" king" has a leading space)')
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--by", choices=("cosine", "dot"), default="cosine", help="rank by cosine (direction) or dot product (lengths too)")
    p.add_argument("--centered", action="store_true", help="subtract the mean row first (changes the scores)")
    _hide_special_option(p)
    p = add("similarity", "cosine similarity of two tokens")
    p.add_argument("word1")
    p.add_argument("word2")
    p.add_argument("--centered", action="store_true")
    p = add("analogy", "A − B + C (e.g. ' king' ' man' ' woman')")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("c")
    p.add_argument("--include-inputs", action="store_true", help="let A, B or C be the answer (word2vec never does)")
    p.add_argument("--exclude-variants", action="store_true",
                   help="also exclude the inputs' case and space variants (' Paris', 'Paris', ' paris', …)")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--method", choices=("add", "mul"), default="add", help="3CosAdd (default) or 3CosMul")
    _hide_special_option(p)
    p = add("logits", "next-token logits and probabilities after TEXT")
    p.add_argument("text")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--direct", action="store_true", help="embedding → output head only, no blocks")
    p = add("lens", "the logit lens: every layer's next-token guess at each position of TEXT")
    p.add_argument("text")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--raw", action="store_true", help="skip the final norm (early layers then look meaningless)")
    p = add("drift", "one word in several sentences: per layer, how alike its vectors stay and how far from its row")
    p.add_argument("word", help='the word to follow, one token (" bank" or bank)')
    p.add_argument("sentences", nargs="+", metavar="SENTENCE")
    p.add_argument("--layer", type=int, default=None, help="list the nearest vocabulary rows at this layer (default: the last)")
    p.add_argument("--k", type=int, default=8)
    p = add("attribute", "which blocks and heads wrote the logit of the token after TEXT (direct logit attribution)")
    p.add_argument("text")
    _target_options(p)
    p.add_argument("--heads", type=int, default=8, help="heads listed at each end of the text output (default 8)")
    p = add("attention", "one block's attention weights over TEXT, its heads ranked by their part of the logit")
    p.add_argument("text")
    p.add_argument("--block", type=int, required=True, help="1…N, as the lens names blocks")
    p.add_argument("--head", type=int, default=None, help="0-based; default: every head of the block")
    _target_options(p)
    p = add("pin", "pinned tokens through the layers: their probability and rank at every layer after TEXT")
    p.add_argument("text")
    p.add_argument("tokens", nargs="+", metavar="TOKEN", help='a token\'s text, taken literally (" Paris" has a leading space)')
    p.add_argument("--position", type=int, default=None, help="0-based, negative from the end; default: the last token")
    p = add("project", "2-D map of the rows, written as CSV (id,token,x,y); how faithful it is on stderr "
                       "(with --json, a summary on stdout)")
    p.add_argument("--method", choices=("pca", "tsne", "umap"), default="pca")
    p.add_argument("--limit", type=int, default=None, help="only the first N row ids")
    p.add_argument("--words-only", action="store_true", help="only rows that are whole words")
    p.add_argument("--out", required=True)
    p = add("clusters", "clusters of the rows, each named by its most central whole words")
    p.add_argument("--method", choices=("graph", "kmeans"), default="graph",  # HDBSCAN needs a drawn map
                   help="graph: communities of each row's 10 nearest rows (default); kmeans: k-means of the rows' directions")
    p.add_argument("--k", type=int, default=CLUSTERS_K,
                   help=f"number of clusters: exact for kmeans, about for graph (default {CLUSTERS_K})")
    p.add_argument("--of", nargs="+", default=[], metavar="WORD", help="also say which cluster these tokens are in")
    p = add("compare", "how alike two models' neighbourhoods are, token by token, over the tokens they share")
    p.add_argument("--with", dest="other", required=True, metavar="MODEL", help="the second model (same forms as --model)")
    p.add_argument("--k", type=int, default=50, help="neighbours per token, 5–250 (default 50)")
    p.add_argument("--token", nargs="+", default=[], metavar="WORD",
                   help="also list these tokens' neighbours: in both, only in the first model, only in the second")
    p = add("analogies", "the Google analogy benchmark (questions-words.txt)")
    p.add_argument("file", nargs="?", default=None)
    p = sub.add_parser("screenshot", help="open the window, drive each panel, save one PNG per panel")
    _model_options(p)
    p.add_argument("--out", required=True, help="folder for the PNG files")
    p.add_argument("--text-size", type=float, default=1.0, help="text size as a factor, 1.0–2.5 (View ▸ Text size)")
    return parser


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
                             hide_special=args.hide_special, by=args.by))
    hits = view.hits
    kind = "cosine" if args.by == "cosine" else "dot product"
    head = f"(mean-centred {kind})\n" if args.centered else ("(dot product)\n" if args.by == "dot" else "")
    return {"results": [h.as_dict() for h in hits], "centered": args.centered, "by": args.by}, head + _hits_text(hits)


def _similarity(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    vocab = model.vocab
    score = ask(rq.Similarity(a=vocab.resolve(args.word1), b=vocab.resolve(args.word2), centered=args.centered))
    return {"score": score}, f"{score:.4f}"


def _analogy(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq
    from embviz.core.table.analogy import parse_inputs

    a, b, c = parse_inputs(model, [args.a, args.b, args.c])
    result = ask(rq.Analogy(a=a, b=b, c=c, k=args.k, exclude_inputs=not args.include_inputs, method=args.method,
                            hide_special=args.hide_special, exclude_variants=args.exclude_variants, plane=False)).result
    ranks = "\n".join(f"  input {r.role} {r.token!s:>16}  would rank {r.rank}" for r in result.input_ranks)
    rule = ("inputs and their variants excluded; " if result.exclude_variants
            else "inputs excluded; " if result.exclude_inputs else "inputs included; ")
    return result.as_dict(), _hits_text(result.results) + "\n" + rule + "without exclusion:\n" + ranks


def _with_language_model(model, ask: Ask) -> None:
    """Build the full model first, as the window does in a job of its own."""
    from embviz.bridge import requests as rq

    if model.kind == "transformer" and not model.lm_loaded:
        ask(rq.LoadLanguageModel())


def _logits(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    if not args.direct:
        _with_language_model(model, ask)
    result = ask(rq.Logits(text=args.text, k=args.k, temperature=args.temperature, direct=args.direct))
    lines = ["tokens: " + " | ".join(label for _, label in result.tokens)]
    lines += [f"note: {n}" for n in result.notes]
    lines += [f"{r.id:>7}  {r.token!s:<20} logit {r.logit:9.3f}   p {r.prob:.4f}" for r in result.results]
    return result.as_dict(), "\n".join(lines)


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
    import csv

    from embviz.bridge import requests as rq

    proj = ask(rq.Project(method=args.method, subset="words" if args.words_only else "all", first=args.limit))
    faithful = ask(rq.Faithfulness(ids=proj.ids, coords=proj.coords))
    tmp = args.out + ".tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "token", "x", "y"])
        for i, (x, y) in zip(proj.ids.tolist(), proj.coords.tolist()):
            writer.writerow([i, model.vocab.texts[i], f"{x:.6g}", f"{y:.6g}"])
    os.replace(tmp, args.out)
    if faithful is not None:
        print(f"embviz: the map {faithful.caption()}", file=sys.stderr)
    summary = {"rows": int(proj.ids.size), "out": args.out, "method": proj.method, "explained": proj.explained,
               "faithfulness": None if faithful is None else faithful.as_dict()}
    return summary, f"wrote {proj.ids.size:,} rows to {args.out}"


def _clusters(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    of_ids = [model.vocab.resolve(word) for word in args.of]  # before the clustering: a typo fails at once
    found = ask(rq.Clusters(method=args.method, k=args.k))
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
    return {"k": args.k, "clusters": clusters, "of": of}, "\n".join(lines)


def _compare(model, args, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq
    from embviz.bridge.handlers import run_request

    pair = ask(rq.LoadComparison(source=args.other, device=args.device))
    view = run_request(pair, rq.Compare(k=args.k, tokens=args.token))
    a, b = view.names
    lines = [f"{a} and {b} share {view.shared:,} tokens; left out: {view.only_a:,} of {a}'s rows, {view.only_b:,} of {b}'s.",
             f"rule (A = {a}, B = {b}): {view.rule}"]
    lines += [f"note: {n}" for n in view.notes]
    procrustes = "" if view.procrustes_mean is None else f", mean cosine distance after rotation {view.procrustes_mean:.4f}"
    lines.append(f"k = {view.k}: mean Jaccard of the neighbour sets {view.mean_jaccard:.4f}, linear CKA {view.cka:.4f}{procrustes}")
    scores = lambda found: ", ".join(f"{t.label} {t.jaccard:.2f}" for t in found)  # noqa: E731
    lines += [f"least similar: {scores(view.least_similar)}", f"most similar:  {scores(view.most_similar)}"]
    labels = lambda words: " ".join(label for _, label in words) or "—"  # noqa: E731
    for t in view.tokens:
        lines += [f"{t.label} (Jaccard {t.jaccard:.2f})", f"  in both:      {labels(t.common)}",
                  f"  only in {a}: {labels(t.only_a)}", f"  only in {b}: {labels(t.only_b)}"]
    return view.as_dict(), "\n".join(lines)


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


COMMANDS: dict[str, Callable[[Any, argparse.Namespace, Ask], tuple[Any, str]]] = {
    "info": _info, "neighbors": _neighbours, "similarity": _similarity, "analogy": _analogy, "logits": _logits,
    "lens": _lens, "drift": _drift, "attribute": _attribute, "attention": _attention, "pin": _pin,
    "project": _project, "clusters": _clusters, "compare": _compare, "analogies": _benchmark,
}


def _hits_text(hits) -> str:
    return "\n".join(f"{h.id:>7}  {h.token!s:<24} {h.score:.4f}" for h in hits)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        from embviz.ui.app import run_app

        return run_app(model=args.model, device=args.device, session=args.session)
    if args.command == "screenshot":
        from embviz.ui.screenshots import run_screenshots

        return _guarded(lambda: run_screenshots(args.out, model=args.model, device=args.device, text_size=args.text_size))
    def run() -> int:
        obj, text = run_command(args)
        if getattr(args, "json", False):
            print(json.dumps(obj, ensure_ascii=False))
        else:
            print(text)
        return 0

    return _guarded(run)


def _guarded(fn) -> int:
    """One plain line on stderr and a non-zero exit for any failure; no traceback."""
    from embviz.core.errors import EmbvizError

    try:
        return fn()
    except EmbvizError as exc:
        print(f"embviz: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("embviz: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the last line of defence: never a traceback
        if os.environ.get("EMBVIZ_DEBUG"):
            raise
        from embviz.core.errors import first_line

        print(f"embviz: unexpected error ({type(exc).__name__}: {first_line(exc)})", file=sys.stderr)
        return 1
