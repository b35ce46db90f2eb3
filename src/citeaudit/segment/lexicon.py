"""Word lists ``rules-v2`` reads English and German sentences with: verbs, determiners, prepositions and the
words that open or join clauses. Lower case; each list is a plain set, so a lookup is one hash."""

from __future__ import annotations


def _words(words: str) -> frozenset[str]:
    """A lexicon written as one string of space-separated words."""
    return frozenset(words.split())


AUX = _words(
    "is are was were am be been being has have had can could may might must shall should will would does "
    "do did ist sind war waren bin bist hat haben hatte hatten kann können konnte darf dürfen muss müssen "
    "soll sollte wird werden wurde wurden"
)
VERBS = _words(
    "builds sells manufactures develops designs publishes recommends "
    "baut stellt produziert verkauft entwickelt verwendet hält trägt nennt heißt "
    "offers supports includes provides comes runs uses requires weighs costs contains features holds "
    "reaches delivers needs meets works operates allows lets remains becomes makes gives helps lasts "
    "measures consumes produces carries suits fits ships stores lacks exceeds matches complies charges "
    "plays serves leads owns lives teaches writes directs sings appears stars describes says claims "
    "reports shows lists became won began wrote grew made took gave led left went held met ran saw taught "
    "built bought brought fought found sold told spent set put lost chose drove rose fell flew knew drew "
    "sang beat struck sought thought came got kept said became lay stood sat spoke broke became underwent "
    "overcame withdrew bietet verfügt eignet lässt wiegt kostet läuft enthält unterstützt erreicht "
    "benötigt erfüllt arbeitet besitzt liefert verbraucht misst fasst gilt liegt steht gehört kommt gibt "
    "zeigt nutzt braucht spielte gewann wurde schrieb lebte arbeitete gründete starb begann"
)
PARTICIPLES = _words(
    "born known made taken given written built held led won become been done seen shown grown drawn sold "
    "told found thought brought bought taught left chosen driven risen fallen flown begun sung beaten "
    "struck sought kept paid said put set run hit lost spent met gone come got gotten geboren bekannt "
    "gegründet gestorben gewählt"
)
NOT_VERB_BEFORE = _words(
    "the a an his her its their our my your this that these those of in on at to for with by from as der "
    "die das den dem des ein eine einen einem einer"
)
SUBORDINATORS = _words(
    "whether if when while although though because since as unless after before until once wenn ob weil "
    "obwohl da als falls nachdem bevor während"
)
DETERMINERS = _words(
    "a an the his her its their our my your this that these those one two three four five six seven eight "
    "nine ten several many some multiple numerous various other both ein eine einen einem einer der die "
    "das den dem des sein seine ihr ihre mehrere viele"
)
PREPOSITIONS = _words(
    "alongside within across toward towards over near throughout starring featuring via beside besides "
    "of in on at to for with by from as about against between into through during including like among "
    "von vom zu zum zur mit für bei aus nach an am im in auf über unter gegen zwischen"
)
ADJUNCTS = _words(
    "in on at after before during from since until for as by with aboard near throughout under im am nach "
    "vor seit bis für mit bei"
)
INCLUDING = ("including", "einschließlich", "darunter")
COORDINATORS = frozenset(["and", "but", "und", "aber", "sowie", "sondern"])
RELATIVES = frozenset(["who", "which", "whose", "where", "welche", "welcher", "welches"])
GERMAN_RELATIVES = frozenset(["der", "die", "das", "dem", "den", "deren", "dessen"])
PRONOUNS = _words("he she it they we i you er sie es wir")
MONTH_NAMES = _words(
    "january february march april may june july august september october november december januar februar "
    "märz juni juli oktober dezember"
)
AFTER_YEAR = frozenset(
    ["in", "at", "after", "before", "during", "from", "aged", "with", "for", "as", "im", "nach", "vor", "für", "mit"]
)
COPULAS = frozenset(["is", "are", "was", "were", "ist", "sind", "war", "waren"])
POSSESSIVES = _words("his her its their our my your sein seine seinen seinem seiner ihr ihre ihren ihrem ihrer")
GROUP_ADVERBS = _words(
    "also since already never often later still then just recently previously subsequently auch bereits"
)
"""Adverbs inside a verb group (``has also won``)."""
NOT_GERUNDS = _words("including during according regarding concerning something nothing anything everything thing")
_IRREGULAR = dict(
    pair.split(":")
    for pair in _words(
        "becoming:became making:made winning:won leaving:left going:went taking:took having:had being:was "
        "getting:got giving:gave running:ran teaching:taught writing:wrote building:built selling:sold "
        "finding:found beginning:began coming:came bringing:brought holding:held leading:led meeting:met "
        "spending:spent setting:set putting:put losing:lost choosing:chose driving:drove rising:rose "
        "falling:fell flying:flew drawing:drew singing:sang beating:beat seeking:sought keeping:kept "
        "saying:said standing:stood speaking:spoke breaking:broke undergoing:underwent overcoming:overcame "
        "earning:earned seeing:saw knowing:knew growing:grew telling:told paying:paid hitting:hit "
        "shooting:shot sitting:sat swimming:swam fighting:fought buying:bought thinking:thought"
    )
)


def past_tense(gerund: str) -> str:
    """The simple past of an ``-ing`` form (``becoming`` → ``became``, ``joining`` → ``joined``, ``moving`` →
    ``moved``, ``studying`` → ``studied``): the irregular verbs of biographies by list, the rest by rule."""
    found = _IRREGULAR.get(gerund)
    if found is not None:
        return found
    stem = gerund[:-3]
    if stem.endswith("y") and len(stem) > 1 and stem[-2] not in "aeiou":
        return stem[:-1] + "ied"
    if stem.endswith("e"):
        return stem + "d"
    return stem + "ed"


TITLE_WORDS = _words("of the a an in and for to on with at vs vs. v. de la del le les von und der die das & : - –")
"""Lower-case words and signs inside a title (``What We Do in the Shadows``, ``Law & Order``)."""
