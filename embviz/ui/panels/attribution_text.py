"""The sentences the Attribution tab says about its numbers: one each, for a class."""

from __future__ import annotations

from embviz.ui.formatting import visible_token


def label(text: str) -> str:
    """A token's text as the tabs show it: a leading space as ␣."""
    return visible_token(text.replace(" ", "␣"))


def parts_sentence(result) -> str:
    after = label(result.token_texts[result.position])
    return (f"Each bar is how much one block's attention or MLP pushed the logit of {label(result.target)} after "
            f"“{after}” up or down; with the embedding's part they add up to the model's logit "
            f"{result.logit:.2f} (p = {result.prob:.1%}).")


def compare_sentence(a, b) -> str:
    return (f"The blocks' parts of the logit of {label(a.target)}: after prompt A (grey, {a.logit:.2f}), after prompt "
            f"B (blue, {b.logit:.2f}) and B − A (orange, {b.logit - a.logit:+.2f}): the orange bars are the blocks whose "
            "writes changed with the prompt.")


def head_sentence(block: int, head: int, value: float, target: str) -> str:
    return f"Block {block}, head {head}: {value:+.2f} of the logit of {label(target)}"


def attention_sentence(pattern, head_index: int) -> str:
    """Where the chosen head looks from the position being predicted."""
    at = pattern.position - pattern.skipped
    row = pattern.weights[head_index][at]
    to = int(row.argmax())
    return (f"From “{label(pattern.token_texts[at])}”, head {pattern.heads[head_index]} of block {pattern.block} puts "
            f"{row[to]:.0%} of its attention on “{label(pattern.token_texts[to])}”. Each row is one token; its "
            "colours show which earlier tokens it reads (a row adds up to 100 %).")


def probability(p: float) -> str:
    return f"{p:.1%}" if p >= 0.001 else f"{p * 100:.2g}%"  # "0.0%" would read as impossible


def pinned_sentence(result, rank: bool) -> str:
    last = len(result.layer_names) - 1
    ends = [f"{label(p.text)} {probability(p.probs[last])} (rank {p.ranks[last]:,})" for p in result.pinned]
    what = "rank among the guesses (1 = the top one)" if rank else "probability"
    return (f"Each line is a token's {what} as the logit lens reads it after every layer; after the last "
            f"block: {', '.join(ends)}.")
