"""The lessons as guided steps (Qt-free): what each step opens and fills in, the two or
three sentences it shows, and where the tour stands. The numbers a step talks about are
never stored here: the window computes them on the model the step opens."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFAULT = None  # the default model's source


@dataclass(frozen=True)
class LessonStep:
    lesson: str  # the seed's number, "000" … "004"
    title: str
    text: str  # two or three sentences, with the lesson's own numbers
    model: str | None  # the source to open: a lesson name, or None for the default model
    tab: str  # the key of the tab it shows: "map", "neighbours", "analogies", "logits", "similarities"…
    setup: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.lesson} · {self.title}"


STEPS: tuple[LessonStep, ...] = (
    LessonStep("000", "Logits at “cast”",
               "A hand-set model of five tokens: an embedding table and one linear layer. After “cast” its logits, "
               "in vocabulary order, are [0.0, 0.5, 0.0, 1.0, 2.0]: fireball is the largest.",
               "spells", "logits", {"logits": "I cast", "by_id": True, "temperature": 1.0}),
    LessonStep("000", "Same id, same logits",
               "Without anything that mixes context, the same id always gets the same logits: “cast” alone gives "
               "[0.0, 0.5, 0.0, 1.0, 2.0] again.",
               "spells", "logits", {"logits": "cast", "by_id": True, "temperature": 1.0}),
    LessonStep("002", "A row lookup: ids [2, 3, 5, 1]",
               "A sequence of ids is a lookup of rows, zero-based and in input order: ids 2, 3, 5 and 1 fetch four "
               "rows of three numbers each, a 4 × 3 matrix. Below, the fetched rows; on the map, the four tokens.",
               "lookup6", "map", {"rows": [2, 3, 5, 1]}),
    LessonStep("003", "Shapes through the model",
               "A decoder-only model maps ids of shape (B, T) to vectors (B, T, D) and then to logits (B, T, V). "
               "Below, the shapes for the text in the logits tab, and the share of the model's parameters in its "
               "embedding table (about 21 % for SmolLM2).",
               DEFAULT, "logits", {"logits": "The capital of France is", "temperature": 1.0, "shapes": True}),
    LessonStep("004", "Dot product and cosine",
               "cat · dog = 2×3 + 3×2 + 0×0 = 12. Divide by both lengths (√13 each) and the cosine is 12 / 13 ≈ 0.923; "
               "cat and car only 0.263. The table shows both measures for every neighbour of cat.",
               "toy4", "neighbours", {"neighbours": "cat", "by": "cosine"}),
    LessonStep("004", "Nearest neighbours",
               "The tokens whose rows point most nearly the same way as ␣king: its capitalised and plural forms, then "
               "queen, emperor, prince. Cosine compares directions only.",
               DEFAULT, "neighbours", {"neighbours": "king", "by": "cosine"}),
    LessonStep("004", "king − man + woman, inputs allowed",
               "The nearest row to king − man + woman is often an input itself: with every token allowed, ␣king "
               "comes right behind ␣queen here (the line under the table gives each input's rank). That is why "
               "word2vec's search excludes the inputs.",
               DEFAULT, "analogies", {"analogy": ("king", "man", "woman"), "exclude": False}),
    LessonStep("004", "king − man + woman, inputs excluded",
               "With word2vec's rule (the three inputs may not be the answer) the answer is ␣queen. The map shows the "
               "arrows man→king and woman→queen that the analogy says are parallel; the Analogies tab lists the "
               "runners-up.",
               DEFAULT, "map", {"analogy": ("king", "man", "woman"), "exclude": True}),
    LessonStep("004", "man : doctor :: woman : ?, inputs allowed",
               "doctor − man + woman, with every token allowed: the nearest row is ␣doctor itself (0.778), an "
               "input. The model's answer to “a woman doctor” is a doctor.",
               DEFAULT, "analogies", {"analogy": ("doctor", "man", "woman"), "exclude": False}),
    LessonStep("004", "man : doctor :: woman : ?, inputs excluded",
               "word2vec's rule forbids the inputs, so the answer must be another word: here ␣physician (0.691). "
               "Nissim et al. (2020): that rule can force a biased-looking answer (nurse, in some tables) that the "
               "vectors alone do not give; show both results.",
               DEFAULT, "analogies", {"analogy": ("doctor", "man", "woman"), "exclude": True}),
    LessonStep("004", "The random baseline",
               "Two random rows of SmolLM2's table have a mean cosine of 0.442 (exact, over all 1.2 billion pairs); "
               "␣Monday–␣Tuesday is 0.894. A cosine here means “alike” only well above 0.442, not above 0.",
               DEFAULT, "directions", {"baseline": True}),
    LessonStep("004", "Static and contextual: ␣bank",
               "The table gives ␣bank one row, so in “river bank” and “paid into the bank” it starts as the same "
               "vector (cosine 1.000). The blocks pull the two apart: after the last block their cosine is 0.607, "
               "against 0.550 for any two tokens of the sentences (the grey floor).",
               DEFAULT, "drift", {"drift": ("bank", ("I sat on the river bank.", "She paid the cash into the bank."))}),
    LessonStep("004", "A direction: he → she",
               "unit(␣she − ␣he), and every whole word ranked along it (25,845). The occupations all lean to the she "
               "side here: ␣nurse 0.200, ␣engineer 0.146, ␣doctor 0.123; their DirectBias (mean |cosine|) is 0.142. "
               "A direction from two words carries more than gender: ␣he and ␣she also differ in how common they are.",
               DEFAULT, "directions", {"direction": ("he", "she", "doctor nurse engineer teacher")}),
    LessonStep("004", "WEAT 8: science vs arts",
               "Caliskan et al.'s test 8: are science words nearer male terms than arts words are? In SmolLM2 the "
               "effect size d = 0.951 (population std, as WEFE) and p = 0.0312, exact over all 12,870 partitions of "
               "the 16 target words.",
               DEFAULT, "directions", {"weat": 8}),
    LessonStep("004", "Three directions, turning",
               "The map's first three PCA axes, turning slowly (T stops it; drag to turn it yourself): the seven "
               "weekdays stay a tight knot and the twelve months a longer streak beside them, both below the middle "
               "of the third axis, which a flat map cannot show. Three axes hold 9.1 % of the variance (5.8 %, 2.2 %, "
               "1.1 %) and keep only 0.5 % of each token's 10 nearest neighbours (0.3 % in two): a picture to turn, "
               "not the table itself.",
               DEFAULT, "map", {"dims": 3, "word_sets": ("weekdays", "months"), "turn": True}),
    LessonStep("004", "Two models, one word",
               "SmolLM2's input table against GloVe, word vectors from 2014: of the 23,172 words they share, each "
               "is scored by the share of its k = 50 nearest neighbours the two agree on. ␣march scores 0.00: "
               "marches, procession, parade in SmolLM2, april, june, july in GloVe. ␣bush (0.00: shrubs or "
               "clinton) and ␣turkey (0.00: poultry or syria) split the same way.",
               DEFAULT, "compare", {"compare": "glove-6b-50d", "k": 50, "focus": "march"}),
    LessonStep("004", "People and the model: cup, coffee, mug",
               "WordSim-353's raters gave cup–coffee 6.58 of 10: related, though not alike. SmolLM2's cosine for "
               "␣cup–␣coffee is 0.468, and over the 320 pairs whose words are one token each ρ = 0.417. ␣mug is two "
               "tokens here (␣m + ug), so cup–mug, the pair people call alike, has no row; in GloVe cup–mug is 0.197 "
               "and cup–coffee 0.355: a model puts related words closer than alike ones.",
               DEFAULT, "similarities", {"similarities": "wordsim353", "pair": "cup mug", "pair_focus": ("cup", "coffee")}),
    LessonStep("004", "The odd one out",
               "Of breakfast, cereal, dinner and lunch, ␣cereal is the odd one out: its cosine to the mean of the "
               "other three rows is 0.632, against 0.785 to 0.824 for the three meals. gensim's doesnt_match picks "
               "the same word.",
               DEFAULT, "odd-one-out", {"odd_one_out": "breakfast cereal dinner lunch"}),
    LessonStep("004", "The capital of France is",
               "The output head scores every token with a dot product: the logits. Softmax turns them into "
               "probabilities over the whole vocabulary; ␣Paris comes first.",
               DEFAULT, "logits", {"logits": "The capital of France is", "temperature": 1.0}),
    LessonStep("004", "Which blocks wrote ␣Paris",
               "The logit of ␣Paris (17.37, p = 77.3%) is a sum of what each block wrote. Block 30's MLP wrote "
               "+6.98 and block 24's attention +3.34; blocks 24–30 together +20.61. Head 4 of block 24 (+2.82) "
               "puts 90% of its attention from “␣is” on “␣France”. Pinned, ␣Paris ranks 2,079 after block 23, "
               "396 after block 24 and first after block 30.",
               DEFAULT, "attribution", {"attribution": "The capital of France is", "pinned": "␣Paris", "head": (24, 4)}),
    LessonStep("004", "Temperature",
               "Dividing the logits by a temperature before the softmax flattens (T > 1) or sharpens (T < 1) the "
               "probabilities; their order never changes. Here T = 2, on a held 0–100 % axis.",
               DEFAULT, "logits", {"logits": "The capital of France is", "temperature": 2.0, "hold_axis": True}),
    LessonStep("004", "Sampling: top-p 0.9",
               "Generation draws the next token from the probabilities, after a filter: top-p 0.9 keeps the most "
               "likely tokens until they hold 90 %, renormalised to 100 % (the green bars); the rest can never be "
               "drawn. At T = 0.7 ␣Paris alone holds 95.5 %, so it is the whole kept set and every Draw gives "
               "␣Paris; at T = 1 the same top-p keeps ten tokens.",
               DEFAULT, "logits", {"logits": "The capital of France is", "temperature": 0.7, "top_p": 0.9}),
    LessonStep("004", "Weight tying",
               "Many models use the same table at both ends: the rows that embed the input also score the output. "
               "Below, whether this model ties them and the share of its parameters they hold.",
               DEFAULT, "logits", {"logits": "The capital of France is", "temperature": 1.0, "shapes": True}),
)


@dataclass
class TourState:
    """Where the lesson tour stands."""

    index: int = 0
    steps: tuple[LessonStep, ...] = STEPS

    @property
    def step(self) -> LessonStep:
        return self.steps[self.index]

    def go(self, index: int) -> LessonStep:
        self.index = min(max(int(index), 0), len(self.steps) - 1)
        return self.step

    def next(self) -> LessonStep:
        return self.go(self.index + 1)

    def back(self) -> LessonStep:
        return self.go(self.index - 1)

    @property
    def at_start(self) -> bool:
        return self.index == 0

    @property
    def at_end(self) -> bool:
        return self.index == len(self.steps) - 1
