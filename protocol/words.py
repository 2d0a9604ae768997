"""How Conjure compares words: "the same word" and "is or contains a written word".

Rulings implemented here:

* Normal form (:func:`normalize`): Unicode NFKC, case-folded, trimmed, inner whitespace
  collapsed to one space, and ONE leading article ("a", "an", "the" as a whole first word
  followed by more text) dropped. Exactly one article per call is dropped, so
  "the a team" becomes "a team"; that is why the comparisons below normalise each input
  once and then work on the normal form without normalising it again.
* Singular and plural are the same word (:func:`same_word`). Each normal form has a set of
  possible base forms (:func:`base_forms`): the text itself; WordNet's noun exception list
  (``noun.exc``: geese -> goose); WordNet morphy's suffix rules (s, ses, xes, zes, ches,
  shes, men, ies; not for words ending in "ss" or of two letters or fewer), kept only when
  the result is a WordNet noun lemma; and lemminflect's noun lemmas. Two texts are the same
  word when their sets overlap. In a phrase only the last token (after the last space or
  hyphen) is inflected: "fire trucks" -> "fire truck".
* The bare-"s" rule: WordNet is full of short lemmas (``ga`` for Georgia, ``physic``,
  ``mar``) and lemminflect guesses ``paris -> pari``, so "drop a final s" misfires on words
  that are singular already. When the text (or, in a phrase, its last token) is itself a
  WordNet noun lemma, a candidate base that is just the text minus its final "s" is kept
  only if noun.exc lists it, or lemminflect's dictionary (not its out-of-vocabulary
  guesser) lemmatises the last token to its "s"-less form and either does not also give
  the token itself as a lemma or, when it does ("letters", "physics", "means"), WordNet's
  SemCor sense counts attest the shorter noun more often than the longer one. So arms ->
  arm, papers -> paper and letters -> letter stay, while gas, Paris, Mars, news, lens,
  physics, means and "Los Angeles" keep only themselves. Words that WordNet does not know
  get every candidate (rockets -> rocket, starships -> starship).
* Containment (:func:`contains_written`, binding): the summoning word is the same word as
  the spell word, or some contiguous run of its whole tokens (split on whitespace and
  hyphens) is.
* Hidden inside (:func:`hidden_inside`, only a hint for the table): a single token starts
  or ends with the spell word (or a base form of either) and the leftover is a real word of
  at least three letters (dogfish/dog, pineapple/apple); or the two are the same word once
  spaces and hyphens are removed (spaceship / "space ship").

The WordNet facts come from ``protocol/data/wordnet_nouns.txt.gz`` (built by
`protocol/databuild/build_wordforms.py`), loaded on first use, so importing this module is cheap
and playing needs no Debian package and no download.
"""

from __future__ import annotations

import functools
import gzip
import re
import unicodedata
from dataclasses import dataclass
from importlib import resources

from conjure.protocol.lemmas import installed_version, noun_lemmas
from conjure.protocol.sections import read_sections
from conjure.protocol.text import BLANK_LOOKING, has_visible, stacked_marks_problem, unshown_problem

__all__ = [
    "MAX_WORD_LENGTH",
    "PLURAL",
    "SAME_LETTERS",
    "base_forms",
    "contains_written",
    "hidden_inside",
    "is_known_noun",
    "made_of_written",
    "normalize",
    "same_word",
    "same_word_reason",
    "validate_written",
]

MAX_WORD_LENGTH = 40
"""Longest accepted written word, in characters after trimming."""

DATA_FILE = "wordnet_nouns.txt.gz"

#: Bound of each memo of a comparison below. They are pure functions of their strings and of the
#: word data (loaded once, immutable), so a memo only saves work: a round compares the same
#: summoning and spell words again for every challenge, "same thing" proposal and at scoring.
_MEMO = 8192
ARTICLES = frozenset({"a", "an", "the"})

# WordNet morphy's noun rules: (suffix, replacement).
_SUFFIX_RULES: tuple[tuple[str, str], ...] = (
    ("s", ""),
    ("ses", "s"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("ies", "y"),
)

# Leftovers shorter than three letters are mostly noise ("go" in cargo, "ma" in dogma).
_SHORT_LEFTOVERS = frozenset({"ox", "ax"})

# Token separators: whitespace, hyphen-minus and hyphen (NFKC maps U+2011 to U+2010).
_SEPARATOR = r"[\s\-\u2010]"
_TOKEN_SPLIT = re.compile(_SEPARATOR + "+")


# ---------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True, slots=True)
class WordData:
    """The WordNet facts the comparisons need."""

    nouns: frozenset[str]
    capitalised: frozenset[str]
    other: frozenset[str]
    exceptions: dict[str, tuple[str, ...]]
    sense_counts: dict[str, int]

    def is_common(self, word: str) -> bool:
        """A lower-case word in any part of speech (not only a name or an acronym)."""
        return word in self.other or (word in self.nouns and word not in self.capitalised)


def parse_word_data(text: str) -> WordData:
    """Parse the data file's text (see `protocol/databuild/build_wordforms.py` for the format)."""
    _, sections = read_sections(text)
    exceptions: dict[str, tuple[str, ...]] = {}
    for line in sections.get("exceptions", []):
        form, *bases = line.split("\t")
        exceptions[form] = tuple(bases)
    sense_counts: dict[str, int] = {}
    for line in sections.get("sensecounts", []):
        lemma, count = line.split("\t")
        sense_counts[lemma] = int(count)
    return WordData(
        nouns=frozenset(sections.get("nouns", [])),
        capitalised=frozenset(sections.get("capitalised", [])),
        other=frozenset(sections.get("other", [])),
        exceptions=exceptions,
        sense_counts=sense_counts,
    )


#: Bumped whenever the way words are compared changes (not only their data).
WORDS_ALGORITHM = 1


@functools.cache
def word_fingerprint() -> str:
    """What words were compared with: the packaged noun data, the lemmatizer's version and the
    comparison's own version, hashed. Logged with each game so an audit under other word data says
    so instead of silently scoring differently."""
    import hashlib

    h = hashlib.sha256(f"conjure-words-{WORDS_ALGORITHM}\x00".encode())
    h.update(resources.files("conjure.protocol.data").joinpath(DATA_FILE).read_bytes())
    # The lemma table (protocol.lemmas) is not hashed: it only caches this version's answers.
    h.update(f"\x00lemminflect {installed_version() or '?'}".encode())
    return "sha256:" + h.hexdigest()[:32]


@functools.cache
def word_data() -> WordData:
    """Load the packaged WordNet data once, on first use."""
    resource = resources.files("conjure.protocol.data").joinpath(DATA_FILE)
    with resource.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as handle:
        return parse_word_data(handle.read())


# ---------------------------------------------------------------------------------------
# Normal form and base forms


def _fold(text: str) -> str:
    """NFKC case folding; NFKC again because case folding can leave decomposed letters."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


@functools.lru_cache(maxsize=_MEMO)
def normalize(text: str) -> str:
    """The normal form of a written word (see the module docstring)."""
    words = _fold(text).split()
    if len(words) > 1 and words[0] in ARTICLES:
        words = words[1:]
    return " ".join(words)


def _tokens(normal: str) -> list[str]:
    """Whole tokens of a normal form, split on whitespace and hyphens."""
    return [token for token in _TOKEN_SPLIT.split(normal) if token]


def _split_last(normal: str) -> tuple[str, str]:
    """Split a normal form before its last token: "fire-trucks" -> ("fire-", "trucks")."""
    cut = max(normal.rfind(separator) for separator in " -\u2010") + 1
    return normal[:cut], normal[cut:]


def _morphy_candidates(token: str, data: WordData) -> set[str]:
    """WordNet morphy's suffix rules, keeping only results that are noun lemmas."""
    if token.endswith("ss") or len(token) <= 2:
        return set()
    found = set()
    for suffix, replacement in _SUFFIX_RULES:
        if token.endswith(suffix):
            candidate = token[: -len(suffix)] + replacement
            if candidate in data.nouns:
                found.add(candidate)
    return found


def _bare_s_allowed(subject: str, last: str, data: WordData) -> bool:
    """Whether a lemma ending in "s" may also be the plural of itself minus that "s".

    ``subject`` is the WordNet lemma (the whole phrase or its last token) and ``last`` the
    token that lemminflect is asked about.
    """
    bare = subject[:-1]
    if bare in data.exceptions.get(subject, ()):
        return True
    known = noun_lemmas(last, guess=False)
    if last[:-1] not in known:
        return False
    if last not in known:
        return True
    return data.sense_counts.get(bare, 0) > data.sense_counts.get(subject, 0)


@functools.lru_cache(maxsize=8192)
def _token_candidates(token: str) -> frozenset[str]:
    """Unfiltered base-form candidates of one lower-case token, itself included."""
    if not token:
        return frozenset({token})
    data = word_data()
    forms = {token, *data.exceptions.get(token, ())}
    forms |= _morphy_candidates(token, data)
    forms.update(noun_lemmas(token, guess=True))
    return frozenset(forms)


def _guard_subject(normal: str, last: str, data: WordData) -> str | None:
    """The WordNet lemma whose bare-"s" reading needs the guard, if any."""
    if not last.endswith("s"):
        return None
    if normal in data.nouns:
        return normal
    return last if last in data.nouns else None


@functools.lru_cache(maxsize=8192)
def _normal_base_forms(normal: str) -> frozenset[str]:
    """Base forms of a text already in normal form: inflect only its last token."""
    data = word_data()
    head, last = _split_last(normal)
    forms = {head + form for form in _token_candidates(last)}
    forms.update(data.exceptions.get(normal, ()))  # "mothers-in-law"
    subject = _guard_subject(normal, last, data)
    if subject is not None and not _bare_s_allowed(subject, last, data):
        forms.discard(normal[:-1])
    forms.add(normal)
    return frozenset(forms)


def base_forms(text: str) -> frozenset[str]:
    """Every form the text could be an inflection of, itself included."""
    return _normal_base_forms(normalize(text))


def _same_normal(a: str, b: str) -> bool:
    """Same word, for texts already in normal form."""
    return a == b or not _normal_base_forms(a).isdisjoint(_normal_base_forms(b))


@functools.lru_cache(maxsize=_MEMO)
def same_word(a: str, b: str) -> bool:
    """Whether two written words are the same word (case, articles, plural ignored)."""
    return _same_normal(normalize(a), normalize(b))


SAME_LETTERS = "same letters"
"""Why two words are the same: equal in normal form (case, spacing, a leading article; W2)."""

PLURAL = "plural"
"""Why two words are the same: singular and plural, their base forms overlap (W3)."""


def same_word_reason(a: str, b: str) -> str | None:
    """Which comparison makes two written words the same word, or None when they are not.

    :data:`SAME_LETTERS` when their normal forms are equal, else :data:`PLURAL` when their base
    forms overlap; exactly when :func:`same_word` holds.
    """
    na, nb = normalize(a), normalize(b)
    if na == nb:
        return SAME_LETTERS
    return PLURAL if _same_normal(na, nb) else None


def is_known_noun(word: str) -> bool:
    """Whether the word or one of its base forms is a WordNet noun lemma (advisory only)."""
    nouns = word_data().nouns
    return any(form in nouns for form in base_forms(word))


# ---------------------------------------------------------------------------------------
# Containment


def _contains_normal(summon: str, spell: str) -> bool:
    """:func:`contains_written` on normal forms."""
    if not summon or not spell:
        return False
    if _same_normal(summon, spell):
        return True
    spell_tokens = _tokens(spell)
    summon_tokens = _tokens(summon)
    size = len(spell_tokens)
    target = " ".join(spell_tokens)
    return any(
        _same_normal(" ".join(summon_tokens[start : start + size]), target)
        for start in range(len(summon_tokens) - size + 1)
    )


@functools.lru_cache(maxsize=_MEMO)
def contains_written(summon: str, spell: str) -> bool:
    """Whether the summoning word is, or has whole tokens that are, the spell word.

    This is the binding check for "the summoned thing cannot be or contain any of the
    written words"; words hidden inside a single token are only hinted by
    :func:`hidden_inside`.
    """
    return _contains_normal(normalize(summon), normalize(spell))


def _is_real_leftover(part: str) -> bool:
    """Whether what is left of a token after cutting the spell word off is a word."""
    if len(part) < 3 and part not in _SHORT_LEFTOVERS:
        return False
    data = word_data()
    return any(data.is_common(form) for form in _normal_base_forms(part))


def _leftovers(token: str, spell: str) -> list[str]:
    """What remains of ``token`` when ``spell`` is cut off its start or its end."""
    if len(token) <= len(spell):
        return []
    parts = []
    if token.startswith(spell):
        parts.append(token[len(spell) :])
    if token.endswith(spell):
        parts.append(token[: -len(spell)])
    return parts


def _closed_up(normal: str) -> str:
    """The text written as one word: "space ship" -> "spaceship"."""
    return "".join(_tokens(normal))


@functools.lru_cache(maxsize=_MEMO)
def made_of_written(summon: str, spells: tuple[str, ...]) -> tuple[int, ...]:
    """The spell words (their indices in ``spells``, in the order they are joined) that the
    summoning word is made of, two or more of them joined into one word, else ().

    The rulebook's own example: "'Dog' and 'Fish' cannot summon 'Dogfish'" (C1, rules version
    3 on). Spaces and hyphens do not count ("dog-fish", "dog fish"), nor a plural ("dogfishes"
    is made of dog and fish, and "dogs" and "fish" make "dogfish"). One spell word alone is
    :func:`contains_written`'s; one hidden beside a word that was not written, as in "carpet"
    when only "car" was written, stays a hint (:func:`hidden_inside`).
    """
    normal = normalize(summon)
    if not normal:
        return ()
    pieces: dict[str, int] = {}
    for i, spell in enumerate(spells):
        spell_n = normalize(spell)
        if spell_n:
            for form in {spell_n, *_normal_base_forms(spell_n)}:
                pieces.setdefault(_closed_up(form), i)
    pieces.pop("", None)
    for whole in {_closed_up(f) for f in {normal, *_normal_base_forms(normal)}}:
        found = _split_into(whole, pieces)
        if found is not None and len(found) >= 2:
            return found
    return ()


def _split_into(text: str, pieces: dict[str, int]) -> tuple[int, ...] | None:
    """``text`` cut into pieces all of which are keys of ``pieces``: their values in order
    (the split of most pieces is not sought: any will do), or None."""
    ways: dict[int, tuple[int, ...]] = {0: ()}  # end of a prefix cut so far -> its pieces
    for start in range(len(text)):
        before = ways.get(start)
        if before is None:
            continue
        for piece, i in pieces.items():
            end = start + len(piece)
            if end not in ways and text.startswith(piece, start):
                ways[end] = (*before, i)
    return ways.get(len(text))


@functools.lru_cache(maxsize=_MEMO)
def hidden_inside(summon: str, spell: str) -> bool:
    """Whether the spell word seems hidden inside one summoning token (a hint, not a rule).

    True for dogfish/dog, pineapple/apple, starships/ship, spaceship/"space ship"; false
    for category/cat, startle/star, heartbeat/art, and whenever :func:`contains_written`
    already holds. Some false hits remain (carpet/car), so the table decides.
    """
    summon_n, spell_n = normalize(summon), normalize(spell)
    if not summon_n or not spell_n or _contains_normal(summon_n, spell_n):
        return False
    spell_forms = [form for form in _normal_base_forms(spell_n) if len(_tokens(form)) == 1]
    for token in _tokens(summon_n):
        for variant in _normal_base_forms(token):
            for form in spell_forms:
                if any(_is_real_leftover(part) for part in _leftovers(variant, form)):
                    return True
    closed_summon, closed_spell = _closed_up(summon_n), _closed_up(spell_n)
    if (closed_summon, closed_spell) != (summon_n, spell_n) and _same_normal(
        closed_summon, closed_spell
    ):
        return True
    # Letters a table reads as the same, which the rules do not (accents count, C1 splits at
    # spaces and hyphens only): "creme brulee" holds "crème", "dog's bowl" holds "dog" (found
    # by review: neither was even flagged).
    loose_summon, loose_spell = _loose(summon_n), _loose(spell_n)
    if (loose_summon, loose_spell) == (summon_n, spell_n):
        return False
    return _contains_normal(loose_summon, loose_spell)


#: Apostrophes, straight and curly, and the possessive "s" after one.
_POSSESSIVE = re.compile(r"['\u2019\u02bc](?:s\b)?")


def _loose(normal: str) -> str:
    """A normal form without accents or apostrophes (a possessive's "s" gone with its one)."""
    bare = "".join(
        ch for ch in unicodedata.normalize("NFD", normal) if not unicodedata.combining(ch)
    )
    return " ".join(_POSSESSIVE.sub(" ", unicodedata.normalize("NFC", bare)).split())


# ---------------------------------------------------------------------------------------
# Validation


#: Why a reveal is refused at the server's door: its word is published exactly as committed.
UNTRIMMED_SUMMON = (
    "A summoning word is committed and revealed without spaces before or after it: "
    "this one cannot be shown as it is."
)


def shape_problem(word: str, *, summon: bool) -> str | None:
    """Why a written word cannot be shown as sent, checked at the server's door (before the
    rules, whose 1-40 characters count it trimmed), or None.

    Why: an attacker's words padded with blank-looking characters (braille blanks, which
    ``str.strip`` keeps) and letters stacked with dozens of combining marks reached every
    board. A summoning word is published exactly as revealed, so it must not be padded at
    all; a spell word is trimmed of spaces by the rules, so only what trimming leaves counts.
    """
    if summon and word != word.strip():
        return UNTRIMMED_SUMMON
    trimmed = word.strip()
    if trimmed and (trimmed[0] in BLANK_LOOKING or trimmed[-1] in BLANK_LOOKING):
        return "A word cannot begin or end with a character that looks like a blank."
    if problem := stacked_marks_problem(trimmed, "The word"):
        return problem + "."
    return None


def validate_written(text: str) -> str | None:
    """An error sentence if the raw text cannot be a written word at all, else None.

    Which characters are shown is :mod:`protocol.text`'s rule, the same as for names and chat.
    """
    trimmed = text.strip()
    if problem := unshown_problem(text, "The word"):
        return problem + "."
    if not has_visible(trimmed):
        return "The word is empty: write at least one letter."
    if len(trimmed) > MAX_WORD_LENGTH:
        # (how many, as a name's refusal says: found by review)
        return (
            f"The word is too long: at most {MAX_WORD_LENGTH} characters are allowed; this "
            f"one has {len(trimmed)}."
        )
    return None
