"""The command line's arguments: one subcommand per view, each with --json."""

from __future__ import annotations

import argparse
from typing import Callable

from embviz.cli.bias_commands import add_bias_commands
from embviz.cli.steer_commands import add_steer_commands
from embviz.core.table.results import TABLES
from embviz.state.tabs import CLUSTERS_K

Add = Callable[..., argparse.ArgumentParser]  # adds one subcommand with the model options and --json


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
    parser.add_argument("--model", default=default(None),
                        help="folder, .gguf, .safetensors/.pt, hub id, or lesson name (spells, toy4); default: SmolLM2-135M")
    parser.add_argument("--device", default=default("auto"), help="auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps")


def _hide_special_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hide-special", action="store_true",
                        help="leave out special tokens and byte pieces that are not whole characters (the window's default)")


def _table_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--table", choices=TABLES, default="input",
                        help="the input embedding table (default) or an untied model's output head; a tied model has one")


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

    _table_commands(add)
    _model_commands(add)
    _map_commands(add)
    add_bias_commands(add)
    add_steer_commands(add)
    p = sub.add_parser("screenshot", help="open the window, drive each panel, save one PNG per panel")
    _model_options(p)
    p.add_argument("--out", required=True, help="folder for the PNG files")
    p.add_argument("--text-size", type=float, default=1.0, help="text size as a factor, 1.0–2.5 (View ▸ Text size)")
    return parser


def _table_commands(add: Add) -> None:
    """info, neighbours, similarity, analogies: lookups in the table."""
    add("info", "vocabulary size, width, tying, embedding share, device, dtype")
    p = add("neighbors", "nearest neighbours of a token, by cosine (or --by dot)")
    p.add_argument("word", help='a token\'s text, taken literally (" king" has a leading space)')
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--by", choices=("cosine", "dot"), default="cosine", help="rank by cosine (direction) or dot product (lengths too)")
    p.add_argument("--centered", action="store_true", help="subtract the mean row first (changes the scores)")
    _hide_special_option(p)
    _table_option(p)
    p = add("similarity", "cosine similarity of two tokens")
    p.add_argument("word1")
    p.add_argument("word2")
    p.add_argument("--centered", action="store_true")
    _table_option(p)
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
    _table_option(p)
    p = add("similarities", "Pearson and Spearman of the model's cosines against people's ratings "
                            "(WordSim-353 and SimLex-999, from gensim's data, or a file)")
    p.add_argument("--pairs", default=None, metavar="FILE", help="a file of 'word1 word2 score' lines instead")
    p.add_argument("--list", type=int, default=10, metavar="N", help="pairs listed, furthest from the line first (default 10)")
    p = add("odd-one-out", "the word that does not belong (gensim's doesnt_match), each word's cosine to the others' mean")
    p.add_argument("words", nargs="+", metavar="WORD", help="three or more words, matched as the rated pairs are")
    _table_option(p)


def _model_commands(add: Add) -> None:
    """logits, the lens, drift, attribution, attention, pinned tokens: the full model's forward pass."""
    p = add("logits", "next-token logits and probabilities after TEXT")
    p.add_argument("text")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--direct", action="store_true", help="embedding → output head only, no blocks")
    p.add_argument("--top-k", type=int, default=0, metavar="K",
                   help="keep the K most likely tokens, ties at the K-th too (default 0: off)")
    p.add_argument("--top-p", type=float, default=1.0, metavar="P",
                   help="keep the most likely tokens until they hold P of the probability (default 1.0: off)")
    p.add_argument("--sample", action="store_true", help="draw one token from the kept set, renormalised")
    p.add_argument("--seed", type=int, default=0, help="the draw's seed; draw i of --steps uses SEED + i (default 0)")
    p.add_argument("--steps", type=int, default=0, metavar="N",
                   help="draw N tokens, each appended to TEXT before the next (implies --sample)")
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


def _map_commands(add: Add) -> None:
    """the map, clusters, a second model to compare with, the benchmark."""
    p = add("project", "2-D or 3-D map of the rows, written as CSV (id,token,x,y[,z]); how faithful it is on stderr "
                       "(with --json, a summary on stdout)")
    p.add_argument("--method", choices=("pca", "tsne", "umap"), default="pca")
    p.add_argument("--limit", type=int, default=None, help="only the first N row ids")
    p.add_argument("--words-only", action="store_true", help="only rows that are whole words")
    p.add_argument("--sample", type=int, default=None, metavar="N",
                   help="t-SNE or UMAP: lay out N sampled rows and place every other row beside its nearest sampled rows")
    p.add_argument("--dims", type=int, choices=(2, 3), default=2, help="2 (x, y) or 3 (x, y, z) components")
    p.add_argument("--out", required=True)
    _table_option(p)
    p = add("clusters", "clusters of the rows, each named by its most central whole words")
    p.add_argument("--method", choices=("graph", "kmeans"), default="graph",  # HDBSCAN needs a drawn map
                   help="graph: communities of each row's 10 nearest rows (default); kmeans: k-means of the rows' directions")
    p.add_argument("--k", type=int, default=CLUSTERS_K,
                   help=f"number of clusters: exact for kmeans, about for graph (default {CLUSTERS_K})")
    p.add_argument("--of", nargs="+", action="extend", default=[], metavar="WORD", help="also say which cluster these tokens are in")
    _table_option(p)
    p = add("compare", "how alike two models' neighbourhoods are, token by token, over the tokens they share "
                       "(or one model's input table and its own output head)")
    second = p.add_mutually_exclusive_group(required=True)
    second.add_argument("--with", dest="other", metavar="MODEL", help="the second model (same forms as --model)")
    second.add_argument("--against", choices=("output",), default=None,
                        help="output: the model's own output head instead of a second model (an untied model's)")
    p.add_argument("--k", type=int, default=50, help="neighbours per token, 5–250 (default 50)")
    p.add_argument("--token", nargs="+", action="extend", default=[], metavar="WORD",
                   help="also list these tokens' neighbours: in both, only in the first model, only in the second")
    p.add_argument("--table", choices=TABLES, default="input",
                   help="with --with: both models' input tables (default) or both output heads (untied models')")
    p = add("analogies", "the Google analogy benchmark (questions-words.txt)")
    p.add_argument("file", nargs="?", default=None)
    p = add("export-html", "one offline HTML page for the class: the map of every row (search, zoom, hover), "
                           "each token's 10 nearest neighbours on a click, the next-token bars after TEXT")
    p.add_argument("--out", required=True, metavar="FILE", help="the .html file to write")
    p.add_argument("--views", default="map,neighbours,logits", help="which views, comma-separated (default: all three)")
    p.add_argument("--text", default="The capital of France is", help="the text whose next token the bars show")
    p.add_argument("--method", choices=("pca", "tsne", "umap"), default="pca", help="how the map is drawn (default pca)")
