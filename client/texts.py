"""The client's longer texts: the help card and "how to play", in the words of docs/RULES.md.

Each is a list of paragraphs; the screen wraps them on words to the terminal's width, and a card
that does not fit scrolls (PgUp/PgDn). A line starting with spaces keeps them as its indent.
"""

from __future__ import annotations

from conjure.protocol.events import RULE_TEXT

#: The words the game uses, one sentence each (shown in the how-to and the help).
SPELL_WORD = "spell word: a clue each player writes in turn, for everyone to see"
SUMMONING_WORD = (
    "summoning word: your secret guess at what the conjurer summons; it is shown only "
    "when everyone has locked in"
)
#: The same, as a spectator reads it.
WATCHED_SUMMONING_WORD = (
    "summoning word: each player's secret guess at what the conjurer summons; all are shown "
    "when everyone has locked in"
)
#: The same, as the conjurer reads it: they are not guessing.
CONJURER_SUMMONING_WORD = (
    "summoning word: the thing you summon, written in secret; the others try to match it"
)
STARS = "★: a category is worth 1 to 3 stars, the points a match scores"

#: What Dark Magic changes (the last paragraph of ``HOWTO``).
HOWTO_DARK = (
    "Dark Magic: the conjurer writes the summoning word first, before any spell word, and "
    "writes no spell word; the others write theirs, starting after the conjurer; the "
    "conjurer then marks 0 to 4 boards. The conjurer's word may be or contain a spell word "
    "(it was written before them); everyone else's still may not."
)

HOWTO: list[str] = [
    "One round per player; each round one player is the conjurer (✦).",
    "1. Choose. The conjurer chooses a category card. " + STARS + ".",
    "2. Spell words. In seat order, starting with the conjurer, everyone writes one spell "
    "word: a clue everyone sees as soon as it is written.",
    "3. Crystals. The conjurer puts crystals (◆) on 2 to 4 boards whose spell words lead "
    "to the thing they have in mind.",
    "4. Summon. Everyone, the conjurer too, writes a secret summoning word: the thing the "
    "conjurer summons. It must not be or contain any spell word of the round (-3).",
    # Every rule a word is challenged under, in the challenge menu's order (a newcomer found
    # three here and four in the menu).
    "5. Review. Anyone may challenge a word (it "
    + ", ".join(RULE_TEXT.values())
    + "; a written word is a spell word) or propose that two words name the same thing; the "
    "players it does not concern vote.",
    "6. Score. When someone matches the conjurer, each of them scores the stars, the "
    "conjurer scores the stars for each of them, every board with a crystal scores 1, and "
    "players who match each other on another word score 2 each. If nobody matches the "
    "conjurer, players who match each other score 2 per star each. If everyone matches, "
    "everyone but the conjurer scores 1. An invalid word costs 3. After the last round the "
    "highest total wins.",
    HOWTO_DARK,
]


def howto_for(variant: str | None) -> list[str]:
    """How to play, for a room of ``variant``: in a Dark Magic room what the variant changes
    comes first (a joiner read steps 2 and 3, "starting with the conjurer", "2 to 4 boards",
    as this room's: found by review)."""
    if variant == "dark-magic":
        return ["This room plays " + HOWTO_DARK, *HOWTO[:-1]]
    return HOWTO


#: The first time, in the lobby: the game in three lines, and where the rest is.
HOWTO_SHORT = (
    "New here? Each round one player, the conjurer, chooses a category; everyone writes a "
    "spell word (a clue all see), then a secret summoning word: match the conjurer's to "
    "score. F2 shows how to play."
)
#: What the lobby adds to it when the room plays Dark Magic (the order above is the standard one).
HOWTO_SHORT_DARK = (
    "This room plays Dark Magic: the conjurer writes the secret summoning word first, before "
    "any spell word, writes no spell word, then marks 0 to 4 boards."
)

HELP: list[str] = [
    "Keys",
    "  Enter: send what you typed. Ctrl-U: clear it. Esc: cancel a choice, close a card.",
    "  PgUp/PgDn: scroll the table talk, or a card. "
    "Ctrl-Q (or Ctrl-C or Ctrl-D on an empty line): quit, your seat kept.",
    "  F1 or /help: this help. F2 or /howto: how to play. F3 or /results: the last results. "
    "F4: the whole panel, when it does not fit.",
    "Crystals (the conjurer): board numbers toggle a crystal; Enter places them.",
    "Review: keys act as you type them. c challenges a word, s proposes two words as the same "
    "thing, v votes, d says you are done: 'c 2 1' challenges board 2's word under rule 1; "
    "'v 1 y', then a reason and Enter, votes yes on proposal 1.",
    "  The rules a word is challenged under: "
    + "; ".join(f"{i} it {text}" for i, text in enumerate(RULE_TEXT.values(), 1))
    + ".",
    "Commands",
    "  /say TEXT: chat. /leave: give up your seat for good. /quit: quit.",
    "Host",
    "  In the lobby: s starts the game, k removes a player (both asked y/n), e edits settings.",
    "  /start, /settings, /order 2 1 3 (new seating, in the lobby), /pause, /resume, "
    "/skip N (this round), /kick N (for the game); N is a board number.",
    "Words",
    "  " + SPELL_WORD + ".",
    "  " + SUMMONING_WORD + ".",
    "  " + STARS + ".",
]

HELP_SPECTATOR: list[str] = [
    "You are watching: nothing to type but /quit.",
    "  PgUp/PgDn: scroll the table talk, or a card. Esc closes a card. Ctrl-Q: quit.",
    "  F1: this help. F2: how to play. F3: the last results.",
    "Words",
    "  " + SPELL_WORD + ".",
    "  " + WATCHED_SUMMONING_WORD + ".",
    "  " + STARS + ".",
]

#: The help as one text (``/help`` used to print it into the feed; kept for callers).
HELP_TEXT = "\n".join(HELP)
