"""The computer players' tuning: every weight and threshold of their word sense.

Tuned with bench/bot_hits.py and bench/bots.py; read by the other :mod:`client.bots` modules.
"""

from __future__ import annotations

# --- tuning (see bench/bot_hits.py and bench/bots.py) ------------------------------------
MEAN_WEIGHT = 0.7  # summon score: this much of the mean similarity to the marked words ...
MIN_WEIGHT = 0.3  # ... and this much of the weakest one (the answer should fit every clue)
TYPICAL_WEIGHT = 0.04  # bonus for well-known members (first in the category's list)
ZIPF_WEIGHT = 0.01  # bonus per Zipf step above 4 for common words
COMPOUND_PENALTY = 0.02  # people write "piano" rather than "grand piano" when both fit
SAME_THING_THRESHOLD = 0.82  # two words this close are the same thing ("sofa", "couch")
SAME_FAMILY_THRESHOLD = 0.74  # a kind of a small family this close names it ("cow", "cattle")
SAME_FAMILY_SIZE = 20  # ... a family of at most this many kinds ("animal" has hundreds)
CATEGORY_FIT_THRESHOLD = 0.22  # a non-member this close to a category still fits it
HIDDEN_RELATED = 0.3  # "dogfish" hides "dog" (related); "carpet" does not hide "car"
MIN_HEAD_MEMBERS = 6  # a custom category's head noun needs this many hyponyms to be used ...
HEAD_SENSE = 0.1  # ... the ten nearest the text's other words this close to them on average

# -- how bots differ: the four cases of bench/bots.py --------------------------------------
DEFAULT_NOISE = 0.02  # a bot's temperature: summoning words are drawn from a softmax ...
SUMMON_CHOICES = 6  # ... over this many best candidates (never from the long tail)
TASTE = 0.5  # a bot's fixed liking per word: N(0, TASTE * noise), drawn once per seed
SPELL_SYNERGY = 0.1  # standard spell words: a little pull towards members the written words
#                      suit (so 2-4 of them can agree), but mostly spread over the category ...
SPELL_SHARP = 0.2  # ... with clues not too distinctive of their aim (z above 2 costs this much
#                    per unit), so a subset of them leaves the table a choice between members
PLAN_EXPECT = 1.0  # conjurer plan: its expected lead (some but not all guessers find it) ...
PLAN_STARS = 2.0  # ... on a card of this many stars (a plan does not know the card's), where
PLAN_EVERYONE = 0.3  # "everyone" costs this (its exact cost, 1 point to every other player,
#                      would overlook that a target only some find leaves the rest matching
#                      each other: "missed-conjurer" is no better for the conjurer) ...
PLAN_MEAN = 1.0  # ... how close the marked words are to the target on average ...
PLAN_MIN = 0.5  # ... and at worst ...
PLAN_TYPICAL = 1.0  # ... and how well-known a member it is
PLAN_TARGETS = 6  # the target is one of the subset's best few for this bot, and ...
PLAN_MIN_Z = 0.5  # every marked word this distinctive of the target (z among the category)
PLAN_MIN_SIM = 0.25  # ... and at least this close to it

# -- Dark Magic: association is measured within the category, not in absolute terms --------
DARK_SECRETS = 25  # the secret is one of the first this many members; a word's association
#                    with a member is its z-score among them ("monkey" is banana's word,
#                    "peel" or "juice" any fruit's)
DARK_RARE = 3.0  # guessers' prior: a member past those is this many nats less likely
DARK_MARK_Z = 0.8  # the conjurer marks every spell word this distinctive of its secret ...
DARK_MARK_MIN_Z = 0.0  # ... or, when none is, the most distinctive one if it is at least this
DARK_MARK_MIN_SIM = 0.2  # ... and never a word this far from the secret in absolute terms
DARK_MARK_SOFT = 0.25  # guessers' model of the marking: a logistic of this width around the bar,
DARK_SLIP = 0.05  # ... and a conjurer who marks otherwise this often
DARK_NAT = 0.02  # Dark Magic summon scores: this much per nat of the guessers' posterior
DARK_COVERED = 1.0  # a spell word aims at a likely secret no written word is distinctive of,
DARK_AIM = 1.0  # ... drawn by prior weight (at this temperature), with a clue word that is:
CLUE_SIM = 3.0  # close to the aim,
CLUE_MIN_SIM = 0.35  # (at least this close)
CLUE_Z = 0.2  # distinctive of it (never below DARK_MARK_Z: it gets a crystal if it is the secret)
CLUE_SPLIT = 0.5  # marked for some likely secrets and not for others (bits of information),
CLUE_CONTEXT = 1.0  # about the category's world,
CLUE_MIN_CONTEXT = 0.15  # (at least this much)
CLUE_MAX_CONTEXT = 0.35  # (no reward for more ...)
CLUE_NAME = 3.0  # ... and not the category's own name ("alcohol", "pet"): penalty past 0.5
