"""Token texts, readable labels, and words → token ids.

A token's *text* is what it decodes to (" king", with its leading space); its
*label* is that text made visible on screen ("␣king"). Lookups by text are literal.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Callable, Sequence

import numpy as np

from embviz.core.errors import EmbvizError, first_line
from embviz.core.table.dictionary import dictionary, is_word

SPACE_MARK = "␣"
# What kind of piece each token is; embviz.core.table.token_kinds names them for the Map tab.
WORD, CONTINUATION, NUMBER, PUNCTUATION, BYTE, SPECIAL = range(6)
_VISIBLE = {"\n": "↵", "\t": "⇥", "\r": "⏎"}
_SP_BYTE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
_STRAY_BYTES = re.compile("([\udc80-\udcff]+)")


# Half of a UTF-16 pair, alone: what a terminal or a clipboard can hand over and no UTF-8 holds.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def check_text(text: str) -> str:
    """`text` if a tokenizer can be given it; one sentence naming the first character it cannot.
    Control characters pass: a byte-level tokenizer encodes them, another reads them as its unknown token."""
    if not isinstance(text, str):
        raise EmbvizError(f"Expected text, got {type(text).__name__}.")
    bad = _LONE_SURROGATE.search(text)
    if bad is not None:
        raise EmbvizError(f"The text holds a lone surrogate (U+{ord(bad.group()):04X}) at character {bad.start() + 1}, "
                          "half of a character that no tokenizer encodes; remove it.")
    return text


@lru_cache(maxsize=1)
def _byte_level_decoder() -> dict[int, str]:
    """GPT-2's map from printable stand-in characters back to raw bytes, as a
    `str.translate` table whose output is latin-1 (one character per byte)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = {c: "\uffff" for c in range(256)}  # a raw low character is no stand-in: make it unencodable
    table.update({c: chr(b) for b, c in zip(bs, cs)})
    return table


def _piece_bytes_byte_level(piece: str) -> bytes | None:
    try:
        return piece.translate(_byte_level_decoder()).encode("latin-1")
    except UnicodeEncodeError:  # a character that is not one of the 256 stand-ins
        return None


def _visible_char(ch: str) -> str:
    if ch in _VISIBLE:
        return _VISIBLE[ch]
    if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
        return f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}"
    return ch


def visible(text: str) -> str:
    """Make spaces at the ends, newlines and control characters visible."""
    if text == "":
        return "∅"
    stripped = text.lstrip(" ")
    core = stripped.rstrip(" ")
    lead = len(text) - len(stripped)
    trail = len(stripped) - len(core) if core else 0
    if not core.isprintable():  # rare: the per-character pass only when something needs it
        core = "".join(_visible_char(ch) for ch in core)
    return SPACE_MARK * lead + core + SPACE_MARK * trail


def bytes_label(raw: bytes) -> str:
    """A token's bytes as one label: what decodes as text, as text (spaces as ␣), and each
    run of bytes that is part of a character only, as its hex ("␣⟨E6⟩" for a space and the
    first byte of 東, "⟨F0 9F⟩" for half an emoji): the rule every tab, label and export shows."""
    text = raw.decode("utf-8", errors="surrogateescape")  # a stray byte b becomes U+DC00 + b
    segments = _STRAY_BYTES.split(text)  # text, bytes, text, bytes, …, text
    return "".join(
        ("⟨" + " ".join(f"{ord(c) - 0xDC00:02X}" for c in segment) + "⟩") if n % 2 else visible(segment)
        for n, segment in enumerate(segments) if segment)


def kind_of_text(text: str, space_prefixed: bool) -> int:
    """The kind of one token's text; `space_prefixed` when words mid-sentence start with a space."""
    core = text.strip()
    if core == "":
        return PUNCTUATION  # spaces, newlines, tabs
    if any(unicodedata.category(ch)[0] == "C" for ch in core):
        return BYTE  # a control character: one of the 256 raw bytes, not text
    if core.replace(",", "").replace(".", "").isnumeric():
        return NUMBER
    if all(unicodedata.category(ch)[0] in "PS" for ch in core):
        return PUNCTUATION
    # Word-level vocabularies (the lessons, GloVe) hold whole words only.
    if not space_prefixed or text[0].isspace():
        return WORD
    return CONTINUATION


@dataclass
class Vocabulary:
    """Per-row token texts and labels for an embedding table of `size` rows."""

    texts: list[str]
    labels: list[str]
    special_ids: frozenset[int] = frozenset()
    partial_ids: frozenset[int] = frozenset()  # byte pieces that are not whole characters
    # A Hugging Face tokenizer, or a function that loads one on first use: importing
    # transformers costs about a second, which the map does not need to wait for.
    tokenizer_loader: Callable[[], Any] | None = None
    word_level: bool = False  # lesson vocabularies: text splits on whitespace
    _tokenizer: Any = field(default=None, repr=False)
    # Text → id, built at the first lookup: for millions of words it is seconds that opening
    # and drawing the map do not need.
    _index: dict[str, int] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _index_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _text_index(self) -> dict[str, int]:
        with self._index_lock:
            if self._index is None:
                if self.partial_ids:
                    index: dict[str, int] = {}
                    for i, t in enumerate(self.texts):
                        if i not in self.partial_ids:
                            index.setdefault(t, i)
                else:  # from the end, so that a text listed twice keeps its first id
                    index = dict(zip(reversed(self.texts), range(len(self.texts) - 1, -1, -1)))
                self._index = index
            return self._index

    @property
    def has_tokenizer(self) -> bool:
        return self._tokenizer is not None or self.tokenizer_loader is not None

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None and self.tokenizer_loader is not None:
            with self._lock:
                if self._tokenizer is None:
                    try:
                        self._tokenizer = self.tokenizer_loader()
                    except EmbvizError:
                        raise
                    except Exception as exc:
                        raise EmbvizError(f"The tokenizer could not be loaded: {first_line(exc)}") from exc
        return self._tokenizer

    @property
    def size(self) -> int:
        return len(self.texts)

    @property
    def has_text_encoder(self) -> bool:
        """True when free text can be turned into ids (needed for the logits panel)."""
        return self.has_tokenizer or self.word_level

    @cached_property
    def space_prefixed(self) -> bool:
        """Whether words mid-sentence are tokens with a leading space (GPT-2 style)."""
        sample = self.texts[: min(len(self.texts), 20000)]
        return sum(t.startswith(" ") for t in sample) > 0.1 * max(1, len(sample))

    @cached_property
    def lowercased(self) -> bool:
        """Whether the vocabulary has no capitals (GloVe's): a typed "Paris" is then looked
        up as "paris", as gensim's evaluate_word_analogies(case_insensitive=True) does."""
        sample = self.texts[: min(len(self.texts), 20000)]
        return not any(t != t.lower() for t in sample) and any(t.isalpha() for t in sample)

    def label(self, token_id: int) -> str:
        return self.labels[token_id]

    def id_of(self, text: str) -> int | None:
        """The row whose token text is exactly `text`, or None."""
        return (self._index if self._index is not None else self._text_index()).get(text)

    def encode(self, text: str) -> list[int]:
        """Token ids for free text, without special tokens added."""
        if self.has_tokenizer:
            return self._tokenize(text, False)
        if self.word_level:
            ids = []
            for word in check_text(text).split():
                token_id = self.id_of(word)
                if token_id is None:
                    raise EmbvizError(f"'{visible(word)}' is not in this model's vocabulary ({self.known_words()}).")
                ids.append(token_id)
            return ids
        raise EmbvizError("This model has no tokenizer, so text cannot be turned into tokens.")

    def encode_for_model(self, text: str) -> list[int]:
        """Ids as the model sees the text: with the tokenizer's own special tokens (e.g. BOS)."""
        if self.has_tokenizer:
            return self._tokenize(text, True)
        return self.encode(text)

    def _tokenize(self, text: str, special: bool) -> list[int]:
        check_text(text)
        tokenizer = self.tokenizer
        try:
            return list(tokenizer.encode(text, add_special_tokens=special))
        except Exception as exc:  # the tokenizer's own error, in words of its own: one sentence of ours
            raise EmbvizError(f"The tokenizer cannot encode this text ({first_line(exc, 120)}).") from exc

    def unknown_id(self) -> int | None:
        """The tokenizer's unknown token (`<unk>`), which stands for any text it has no piece for."""
        unk = getattr(self.tokenizer, "unk_token_id", None) if self.has_tokenizer else None
        return unk if isinstance(unk, int) and 0 <= unk < self.size else None

    def known_words(self, limit: int = 8) -> str:
        shown = ", ".join(self.texts[:limit])
        return f"it has {shown}" + (", …" if self.size > limit else "")

    def resolve(self, word: str) -> int:
        """The single token for `word`, taken literally (leading space included).

        A word that is several tokens is an error that names its pieces: averaging
        them would silently show a vector that is no token at all.
        """
        if word == "":
            raise EmbvizError("The word is empty: type a token.")
        token_id = self.id_of(word)
        if token_id is not None:
            return token_id
        if not self.has_tokenizer:
            raise EmbvizError(f"'{visible(word)}' is not in the vocabulary ({self.known_words()}).")
        pieces = self.encode(word)
        unk = self.unknown_id()
        if unk is not None and unk in pieces:
            raise EmbvizError(f"'{visible(word)}' is not in this vocabulary: its tokenizer reads "
                              f"{'it' if len(pieces) == 1 else 'part of it'} as the unknown token '{self.labels[unk]}'.")
        if len(pieces) == 1:
            return pieces[0]
        shown = " + ".join(f"'{self.labels[p]}'" for p in pieces)
        hint = ""
        if not word.startswith(" ") and self.space_prefixed and self.id_of(" " + word) is not None:
            hint = f" Did you mean '{SPACE_MARK}{word}' (with a leading space)?"
        raise EmbvizError(f"'{visible(word)}' is not one token but {len(pieces)}: {shown}.{hint}")

    def special_filter(self, hide: bool) -> np.ndarray | None:
        """The rows kept when special tokens and partial byte pieces are hidden (the
        window's default, the CLI's --hide-special), or None when nothing is hidden."""
        return self._ordinary_rows if hide else None

    @cached_property
    def _ordinary_rows(self) -> np.ndarray:
        return self.mask(hide_special=True, hide_partial=True)

    def mask(self, *, hide_special: bool = False, hide_partial: bool = False, words_only: bool = False) -> np.ndarray:
        """Boolean mask over rows to keep; row ids stay the true ids."""
        keep = np.ones(self.size, dtype=bool)
        if hide_special and self.special_ids:
            keep[list(self.special_ids)] = False
        if hide_partial and self.partial_ids:
            keep[list(self.partial_ids)] = False
        if words_only:
            keep &= self.whole_words
        return keep

    @cached_property
    def whole_words(self) -> np.ndarray:
        """The rows that are whole words: word starts ("␣Monday") that are words in their own
        right, not the first piece of a longer one ("␣amput", see `dictionary`); without a space
        marker (the lessons, word vectors) every word is whole. Read-only."""
        whole: np.ndarray = self.kinds == WORD
        if self.space_prefixed and not self.word_level:
            words = dictionary()
            starts = np.flatnonzero(whole)
            whole[starts] = [is_word(self.texts[i], words) for i in starts.tolist()]
        whole.flags.writeable = False
        return whole

    @cached_property
    def kinds(self) -> np.ndarray:
        """The kind of every row (uint8, WORD … SPECIAL), read-only."""
        space_prefixed = self.space_prefixed and not self.word_level
        kinds = np.fromiter((kind_of_text(t, space_prefixed) for t in self.texts), dtype=np.uint8, count=self.size)
        if self.partial_ids:
            kinds[list(self.partial_ids)] = BYTE
        if self.special_ids:
            kinds[list(self.special_ids)] = SPECIAL
        kinds.flags.writeable = False
        return kinds


def vocabulary_from_words(words: Sequence[str], size: int | None = None) -> Vocabulary:
    """A word-level vocabulary (the lesson models): each entry is one token."""
    texts = list(map(str, words))
    size = len(texts) if size is None else size
    texts = _pad_texts(texts, size)
    # Tested on all the words at once: most vocabularies (every word-vector file) hold no
    # <special> words and no word that needs making visible, so neither costs a step per word.
    joined = "".join(texts)
    special = frozenset() if "<" not in joined else frozenset(
        i for i, t in enumerate(texts) if t.startswith("<") and t.endswith(">"))
    plain = joined.isprintable() and " " not in joined and all(texts)
    return Vocabulary(texts=texts, labels=list(texts) if plain else [visible(t) for t in texts],
                      special_ids=special, word_level=True)


def vocabulary_from_ids(size: int) -> Vocabulary:
    """No tokenizer: rows are labelled by id only."""
    texts = [f"#{i}" for i in range(size)]
    return Vocabulary(texts=texts, labels=texts[:])


def _pad_texts(texts: list[str], size: int) -> list[str]:
    if len(texts) >= size:
        return texts if len(texts) == size else texts[:size]
    return texts + [f"⟨unused {i}⟩" for i in range(len(texts), size)]


def vocabulary_from_tokenizer(tokenizer: Any, size: int, loader: Callable[[], Any] | None = None) -> Vocabulary:
    """Texts and labels for every row of a table of `size` rows.

    `tokenizer` is a Hugging Face tokenizer or a bare `tokenizers.Tokenizer` (enough for
    labels); with the latter, `loader` supplies the full tokenizer when text is first encoded.
    """
    backend = getattr(tokenizer, "backend_tokenizer", None) or (tokenizer if hasattr(tokenizer, "id_to_token") else None)
    if backend is not None:
        n = min(backend.get_vocab_size(with_added_tokens=True), size)
        pieces = [backend.id_to_token(i) for i in range(n)]
        added_tokens = backend.get_added_tokens_decoder()
        added = {i: t.content for i, t in added_tokens.items()}
        special = frozenset(i for i, t in added_tokens.items() if t.special and 0 <= i < size)
        decoder = repr(backend.decoder)
        decode_one = lambda i: backend.decode([i], skip_special_tokens=False)  # noqa: E731
    else:
        n = min(len(tokenizer), size)
        pieces = tokenizer.convert_ids_to_tokens(list(range(n)))
        added = {i: str(t) for i, t in (getattr(tokenizer, "added_tokens_decoder", {}) or {}).items()}
        special = frozenset(i for i in tokenizer.all_special_ids if 0 <= i < size)
        decoder = ""
        decode_one = lambda i: tokenizer.decode([i], clean_up_tokenization_spaces=False)  # noqa: E731
    style = "byte-level" if "ByteLevel" in decoder else "metaspace" if "Metaspace" in decoder else "auto"
    texts, labels, partial = decode_pieces(pieces, size, style, special, added, decode_one)
    full = tokenizer if backend is not tokenizer else None
    return Vocabulary(texts=texts, labels=labels, special_ids=special, partial_ids=partial,
                      tokenizer_loader=loader, _tokenizer=full)


def decode_pieces(
    pieces: Sequence[str | None],
    size: int,
    style: str,
    special: frozenset[int],
    added: dict[int, str],
    decode_one: Callable[[int], str] | None = None,
) -> tuple[list[str], list[str], frozenset[int]]:
    """(texts, labels, partial ids) for a table of `size` rows from a tokenizer's pieces.

    `style` says how a piece spells its text: "byte-level" (GPT-2's stand-in characters),
    "metaspace" (SentencePiece's ▁ and <0xAB> byte pieces), or "auto" (SentencePiece
    when a piece looks like one, else `decode_one`, else the piece itself).
    """
    texts: list[str] = []
    labels: list[str] = []
    partial: set[int] = set()
    for i, piece in enumerate(pieces):
        piece = piece if piece is not None else ""
        raw: bytes | None = None
        if i in special or i in added:
            text = added.get(i, piece)
            texts.append(text)
            labels.append(visible(text))
            continue
        if style == "byte-level":
            raw = _piece_bytes_byte_level(piece)
        elif style == "metaspace" or piece.startswith("▁") or _SP_BYTE.match(piece):
            m = _SP_BYTE.match(piece)
            raw = bytes([int(m.group(1), 16)]) if m else piece.replace("▁", " ").encode("utf-8")
        if raw is not None:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                # A piece of a multi-byte character: show its bytes, keep it out of lookups.
                partial.add(i)
                texts.append(raw.decode("utf-8", errors="replace"))
                labels.append(bytes_label(raw))
                continue
        else:
            text = decode_one(i) if decode_one is not None else piece
            if "\ufffd" in text:
                partial.add(i)
                texts.append(text)
                labels.append(f"⟨{piece}⟩")
                continue
        texts.append(text)
        labels.append(visible(text))
    texts = _pad_texts(texts, size)
    labels = labels + texts[len(labels):]
    return texts, labels, frozenset(partial)
