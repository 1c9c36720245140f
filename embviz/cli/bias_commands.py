"""direction, weat, baseline: meaning in directions and bias in word sets, printed."""

from __future__ import annotations

import argparse
from typing import Any, Callable

from embviz.core.errors import EmbvizError

Ask = Callable[[Any], Any]  # runs one request on the open model


def _words(text: str | None) -> list[str]:
    from embviz.state.word_sets import parse_word_list

    return parse_word_list(text or "")


def _pairs(text: str | None) -> list[tuple[str, str]]:
    pairs = []
    for item in _words(text):
        parts = item.split(":")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise EmbvizError(f"'{item}' is no pair: write pairs as from:to, separated by commas (he:she,man:woman).")
        pairs.append((parts[0].strip(), parts[1].strip()))
    return pairs


def _dropped_lines(sets) -> list[str]:
    return [f"  {s.name} dropped '{d.word}': {d.reason}" for s in sets for d in s.dropped]


def direction_command(model, args: argparse.Namespace, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    request = rq.Direction(start=args.start or "", end=args.end or "", pairs=_pairs(args.pairs), a_set=_words(args.a_set),
                           b_set=_words(args.b_set), pca=args.pca, top=args.top, words=_words(args.words),
                           words_only=not args.all_rows)
    found = ask(request)
    lines = [f"direction ({found.kind}): {found.described}"]
    if found.explained is not None:
        lines.append(f"first principal component of the centred pairs: {found.explained:.1%} of their variance")
    lines.append(f"rule: {found.rule}")
    lines += _dropped_lines(found.sets)
    lines.append(f"{found.ranked:,} rows ranked ({'whole words' if found.words_only else 'all rows'}); toward the 'to' end:")
    lines += [f"  {h.token!s:<24} {h.score:+.4f}" for h in found.toward]
    lines.append("toward the 'from' end:")
    lines += [f"  {h.token!s:<24} {h.score:+.4f}" for h in found.away]
    if found.placed:
        lines.append("placed:")
        lines += [f"  {p.label:<24} {p.cosine:+.4f}  rank {p.rank if p.rank is not None else 'n/a'}" for p in found.placed]
        lines.append(f"DirectBias (c = 1) of the placed words: {found.direct_bias:.4f}")
    return found.as_dict(), "\n".join(lines)


def weat_command(model, args: argparse.Namespace, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    lists = {key: _words(getattr(args, key)) for key in "xyab"}
    if args.word is not None:
        if args.test is not None or lists["x"] or lists["y"]:
            raise EmbvizError("SC-WEAT (--word) takes one word and --a, --b; not --test, --x or --y.")
        single = ask(rq.ScWeat(word=args.word, a=lists["a"], b=lists["b"], permutations=args.permutations, seed=args.seed))
        d = "undefined" if single.effect_size is None else f"{single.effect_size:.4f}"
        return single.as_dict(), (f"SC-WEAT of {single.label}: s = {single.s:+.4f}, effect size {d}, p = {single.p_value:.4g} "
                                  f"({'exact, ' if single.exact else ''}{single.permutations:,} partitions)")
    if args.test is not None and any(lists.values()):
        raise EmbvizError("Give --test N or the four lists --x, --y, --a, --b, not both.")
    if args.test is None and not all(lists.values()):
        missing = ", ".join(f"--{key}" for key, words in lists.items() if not words)
        raise EmbvizError(f"Give --test N (1–10, Caliskan et al.'s tests) or all four lists; missing {missing}.")
    found = ask(rq.Weat(test=args.test, permutations=args.permutations, seed=args.seed,
                        sampling="wefe" if args.wefe_draws else "partitions", **lists))
    d = "undefined" if found.effect_size is None else f"{found.effect_size:.4f}"
    how = "exact, over all" if found.exact else f"seed {found.seed},"
    lines = [found.name, f"effect size {d}   statistic {found.statistic:.4f}   p = {found.p_value:.4g} "
             f"({how} {found.permutations:,} partitions{'; WEFE draws' if found.sampling == 'wefe' else ''})",
             f"rule: {found.rule}"]
    lines += [f"  {s.name}: {len(s.kept)} kept, {len(s.dropped)} dropped" for s in (found.x, found.y, found.a, found.b)]
    lines += _dropped_lines((found.x, found.y, found.a, found.b))
    lines += [f"note: {n}" for n in found.notes]
    return found.as_dict(), "\n".join(lines)


def baseline_command(model, args: argparse.Namespace, ask: Ask) -> tuple[Any, str]:
    from embviz.bridge import requests as rq

    found = ask(rq.CosineBaseline())
    mean = "undefined (fewer than two rows with a direction)" if found.mean_cosine is None else f"{found.mean_cosine:.6f}"
    text = (f"mean cosine of {found.pairs:,} pairs of distinct rows: {mean} "
            f"({found.rows:,} rows; {found.excluded:,} without a direction left out)")
    return found.as_dict(), text


def add_bias_commands(add: Callable[..., argparse.ArgumentParser]) -> None:
    """direction, weat, baseline."""
    p = add("direction", "a concept direction (to − from, pairs, or two sets), the vocabulary ranked along it")
    p.add_argument("--from", dest="start", default=None, metavar="WORD")
    p.add_argument("--to", dest="end", default=None, metavar="WORD")
    p.add_argument("--pairs", default=None, metavar="A:B,C:D", help="word pairs from:to, comma-separated (he:she,man:woman)")
    p.add_argument("--a-set", default=None, metavar="W,W", help="the 'from' set: the direction is mean of B − mean of A")
    p.add_argument("--b-set", default=None, metavar="W,W", help="the 'to' set")
    p.add_argument("--pca", action="store_true", help="the pairs' first principal component (Bolukbasi et al. 2016)")
    p.add_argument("--words", default=None, metavar="W,W", help="words to place on the direction (and their DirectBias)")
    p.add_argument("--top", type=int, default=20, help="rows listed at each end (default 20)")
    p.add_argument("--all-rows", action="store_true", help="rank every row, not only whole words")
    p = add("weat", "the Word Embedding Association Test (Caliskan et al. 2017): effect size and p-value")
    p.add_argument("--test", type=int, default=None, metavar="N", help="one of the paper's ten tests, 1–10")
    for key, what in (("x", "target set X"), ("y", "target set Y"), ("a", "attribute set A"), ("b", "attribute set B")):
        p.add_argument(f"--{key}", default=None, metavar="W,W", help=f"{what}, comma-separated")
    p.add_argument("--word", default=None, help="SC-WEAT: this one word against --a and --b")
    p.add_argument("--permutations", type=int, default=100_000,
                   help="random partitions drawn where there are more than 100,000 (default 100,000)")
    p.add_argument("--seed", type=int, default=0, help="the random partitions' seed (default 0)")
    p.add_argument("--wefe-draws", action="store_true",
                   help="draw as WEFE 1.0.1 does (words with replacement), to compare with it")
    add("baseline", "the mean cosine over all pairs of distinct rows: the random baseline")


BIAS_COMMANDS = {"direction": direction_command, "weat": weat_command, "baseline": baseline_command}
