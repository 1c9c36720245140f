"""steer, direction-layers: a concept direction in the running model, printed."""

from __future__ import annotations

import argparse
from typing import Any, Callable

Ask = Callable[[Any], Any]  # runs one request on the open model


def add_steer_commands(add: Callable[..., argparse.ArgumentParser]) -> None:
    """steer, direction-layers."""
    p = add("steer", "add α × (a residual norm) × the direction from → to after one layer, at every position; "
                     "the next-token guess before and after")
    p.add_argument("text")
    _words(p)
    p.add_argument("--layer", type=int, required=True,
                   help="0: the embedding output (before block 1); L: after block L, as the lens names layers")
    p.add_argument("--alpha", type=float, required=True,
                   help="in units of the mean L2 norm of the residual at that layer over the text's positions "
                        "(position 0 left out); negative steers toward --from")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--watch", nargs="+", default=[], metavar="TOKEN",
                   help='tokens whose probabilities to report, taken literally (" he"); default: the two words\' tokens')
    p = add("direction-layers", "the residual stream at one position projected on the unit direction from → to, "
                                "at every layer")
    p.add_argument("text")
    _words(p)
    p.add_argument("--position", type=int, default=None, help="0-based, negative from the end; default: the last token")


def _words(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from", dest="start", required=True, metavar="WORD", help="the direction's start (he)")
    p.add_argument("--to", dest="end", required=True, metavar="WORD", help="its end (she)")


def _with_language_model(model: Any, ask: Ask) -> None:
    from embviz.bridge import requests as rq

    if model.kind == "transformer" and not model.lm_loaded:
        ask(rq.LoadLanguageModel())


def steer_command(model: Any, args: argparse.Namespace, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    _with_language_model(model, ask)
    result = ask(rq.Steer(text=args.text, start=args.start, end=args.end, layer=args.layer, alpha=args.alpha, k=args.k,
                          watch=args.watch))
    lines = [f"note: {n}" for n in result.notes]
    lines.append(f"{result.direction} × {result.alpha:g} × {result.scale:.3f} added after {result.layer_name}, "
                 f"at every position (α in units of {result.alpha_units})")
    lines.append(f"{'before':<34}  after")
    lines += [f"{b.token!s:<20} p {b.prob:.4f}   {a.token!s:<20} p {a.prob:.4f}"
              for b, a in zip(result.before, result.after)]
    lines += [f"watch {w.label!s:<16} p {w.prob_before:.4f} → {w.prob_after:.4f}" for w in result.watched]
    return result.as_dict(), "\n".join(lines)


def direction_layers_command(model: Any, args: argparse.Namespace, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    _with_language_model(model, ask)
    result = ask(rq.DirectionLayers(text=args.text, start=args.start, end=args.end, position=args.position))
    lines = [f"note: {n}" for n in result.notes]
    lines.append(f"{result.direction} at position {result.position} ('{result.tokens[result.position][1]}'):")
    width = max(len(name) for name in result.layer_names)
    lines.append(f"{'layer':<{width}}  {'projection':>10}  {'norm':>10}  {'cosine':>7}")
    lines += [f"{name:<{width}}  {p:10.4f}  {r:10.3f}  {c:+7.4f}"
              for name, p, r, c in zip(result.layer_names, result.projections, result.norms, result.cosines)]
    return result.as_dict(), "\n".join(lines)


STEER_COMMANDS = {"steer": steer_command, "direction-layers": direction_layers_command}
