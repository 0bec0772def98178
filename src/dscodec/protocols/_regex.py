"""Whether a schema's ``pattern`` (or a ``patternProperties`` name) is a regular expression the reference accepts.

What the reference accepts was worked out by probing it (recorded: the ``schema-regex-*`` golden cases). A
pattern is read twice, and both readings must succeed:

* a *strict* reading in the syntax of Rust-style engines, after two ECMA-262 adjustments: ``\\cX`` (``X`` an ASCII
  letter) is a control character, and inside a class a ``[``, a doubled ``&`` or ``~`` and a hyphen next to another
  hyphen are plain characters (:func:`_ecma_classes`). This reading stops for good at the first look-around or
  back-reference, which it does not know; a pattern it reads to the end must not hold the bell escape ``\\a``;
* a *lenient* reading by an engine that adds look-around, back-references, atomic groups and possessive
  quantifiers, with fewer rules of its own (a ``{`` that starts no valid count is a plain character; a count's
  bounds may come in reverse order, but in a look-behind; a comment ``(?#…)`` is skipped wherever white space is
  in extended mode). It takes no quantifier after ``\\K``, ``\\G``, a look-around or nothing, nor after a group
  that captures nothing holding only one of those. A look-behind of varying length must be one it can match
  backwards: per branch of its alternation, one of a fixed length, an easy one, or a concatenation whose hard
  items (below) each have a fixed length (:func:`_behind_matchable`). It checks that, and a look-behind's count in
  reverse order, only when it compiles the part, so neither matters under a repetition ``{0}``.

The readings scope flags differently. A flag group alone (``(?x)``, ``(?i-x)``) holds to the end of the group around
it in the strict reading; in the lenient one only when that group captures nothing (``(?:…)``, ``(?i:…)``): out of a
capturing group, a look-around or an atomic group it goes on, so ``(?=(?x)a) #(`` ends in a comment. When the two
readings' flags part while both go on, the lenient reading is done again on its own (:func:`regex_ok`). In extended
mode the strict reading skips white space and comments in a class, the lenient one takes them as characters; when
the two end a class apart, the lenient reading is done again too, by its rules alone from that class on. White space
is Unicode's White_Space for the strict reading, only a space, a tab, a line feed and a carriage return for the
lenient one (it takes the rest as characters, which it may repeat: ``(?x)a?\\u3000*`` is taken); where the strict
reading skipped some of the rest outside a class, the lenient reading is done again on its own too. A comment ends
at a line feed in both. A back-reference in a class stops the strict reading there (``(?x)(a)[ ]\\1``). The lenient
engine reads the pattern as the strict reading writes it out: a ``\\cX`` it read as that control character and, when
it reads the pattern to the end, a class escape it read in a class as a class, ``[`` first (so in extended mode
``[ -\\d]`` is a range from the space to ``[``, then ``0-9]`` closes the class). Where the lenient engine ends a
class past the strict reading's end (:meth:`_Reader.lenient_rest`), what lies between is read in the text of the
program the class lands in, as the lenient engine writes it out: its ``)`` may close groups written there around
the class (``([]0-[b])(])`` is taken, ``(?:[]0-[b])(])`` is not). In braces (a count, ``\\b{…}``, ``\\x{…}``) the
lenient reading skips what it skips between a pattern's parts, comments included.

Then each program the pattern compiles to must stay under a size limit (10 MiB). A pattern without hard parts
(look-arounds, back-references and the groups they name, atomic groups, possessive repetitions, word boundaries)
is one program; in a pattern with some, the lenient engine runs the hard parts itself and compiles only easy runs
around them, each on its own (:class:`_Item` says which). A repetition the engine runs (one of a hard part, one
between hard parts, one alone in a group a back-reference names) is no program: ``\\1(a){1000000}``,
``\\1(a{1000000})`` and ``\\ba{1000000}\\b`` are taken, while in ``\\1(ab{1000000})`` the group's inside, a run
of a fixed length, is one program, too large. dscodec estimates each program's size from the pattern's shape (a
class outside ASCII by the trie of its UTF-8 sequences; the class escapes as the reading whose program counts
reads them), so a pattern within a few copies of the limit may be judged differently. Under the i flag a class (and
a letter) holds every case of its characters, by simple case folding from a table of the module's own (Unicode 16,
whatever the running Python's version): ``(?i)\\w`` gains the Kelvin sign and the long s and costs four times
``\\w``; a property's class under the i flag has measured costs for the ones of one case (``\\p{Lu}``), else
those without the flag. An easy part of a look-behind of varying length has a far smaller limit of its own in the
reference (near 77,600 automaton states: ``(?<=a+b{77651})`` is taken, ``(?<=a+b{77652})`` is not); dscodec does
not model it and takes those parts up to the general limit. Unicode property names are checked against the
tables the reference knows (Unicode 16).

Every step is linear in the pattern's length (folding a class's cases takes a bounded amount of work, a few
thousand code points at most); groups nest at most 63 deep (deeper is refused, as by the reference), so the
recursion is bounded.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any, NoReturn

__all__ = ["ecma_regex_ok", "regex_ok"]

#: The size limit of a compiled pattern, less what every program holds.
_SIZE_LIMIT = 10 * 1024 * 1024 - 216
#: Groups nest at most this deep; for the strict reading groups, repetitions, classes (two levels each), and
#: concatenations and alternations of two items or more, at most :data:`_NEST_LIMIT` deep.
_GROUP_LIMIT = 63
_NEST_LIMIT = 250
#: The shortest match of a repetition is counted up to this (its only use is to tell fixed lengths apart).
_LEAST_CAP = 1 << 64

_START, _AFTER_ATOM, _RANGE_END = 0, 1, 2


def _consume(state: int) -> int:
    return _START if state == _RANGE_END else _AFTER_ATOM


def _ecma_classes(pattern: str) -> str:
    """``pattern`` with the characters a class holds literally under ECMA-262 escaped for the strict reading."""
    out: list[str] = []
    in_class = escaped = class_escape = initial = False
    state = _START
    n = len(pattern)
    i = 0
    while i < n:
        c = pattern[i]
        i += 1
        if escaped:
            escaped = False
            if in_class:
                state = _consume(state)
                class_escape = c in "dDsSwW"
                initial = False
            out.append(c)
            continue
        if c == "\\":
            escaped = True
            out.append(c)
            continue
        if c == "[":
            if in_class:
                out.append("\\")
                state = _consume(state)
                class_escape = initial = False
            else:
                in_class, state, class_escape, initial = True, _START, False, True
            out.append(c)
            continue
        if c == "]" and in_class:
            in_class, state, class_escape = False, _START, False
            out.append(c)
            continue
        if not in_class:
            out.append(c)
            continue
        following = pattern[i] if i < n else None
        if c == "^" and initial:
            initial = False
            out.append(c)
            continue
        if c == "-" and class_escape and following == "-":
            # A class escape never starts a range: both hyphens are characters.
            out.append("\\-\\-")
            i += 1
            state = _consume(state)
            class_escape = initial = False
            continue
        if c == "-" and state == _AFTER_ATOM and following is not None and following != "]":
            state = _RANGE_END  # a range's hyphen
            class_escape = False
            out.append(c)
            continue
        if c in "&~" and following == c:
            out.append(f"\\{c}\\{c}")
            i += 1
            state = _consume(state)
        elif c == "-" and (pattern[i - 2 : i - 1] == "-" or following == "-"):
            out.append("\\-")
        else:
            out.append(c)
        state = _consume(state)
        class_escape = initial = False
    return "".join(out)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


class _Invalid(Exception):
    """The pattern is refused."""


class _Parted(Exception):
    """The strict reading stopped after the two readings parted (their flags, or where a class ends): the rest is for
    a second reading. Its argument: the reader."""


class _BackInClass(Exception):
    """The strict reading met a back-reference in a class, where it stops (see :meth:`_Reader.char_class`)."""


def _fail() -> NoReturn:
    raise _Invalid


# Unicode properties, by normalised name (lower case, without spaces, hyphens or underscores, non-ASCII dropped).
_GENERAL = _words(
    """any ascii assigned c casedletter cc cf closepunctuation cn cntrl co combiningmark connectorpunctuation
    control currencysymbol dashpunctuation decimalnumber digit enclosingmark finalpunctuation format
    initialpunctuation l lc letter letternumber lineseparator ll lm lo lowercaseletter lt lu m mark mathsymbol mc me
    mn modifierletter modifiersymbol n nd nl no nonspacingmark number openpunctuation other otherletter othernumber
    otherpunctuation othersymbol p paragraphseparator pc pd pe pf pi po privateuse ps punct punctuation s sc
    separator sk sm so spaceseparator spacingmark symbol titlecaseletter unassigned uppercaseletter z zl zp
    zs"""
)
_SCRIPTS = _words(
    """adlam adlm aghb ahom anatolianhieroglyphs arab arabic armenian armi armn avestan avst bali balinese bamu bamum
    bass bassavah batak batk beng bengali bhaiksuki bhks bopo bopomofo brah brahmi brai braille bugi buginese buhd
    buhid cakm canadianaboriginal cans cari carian caucasianalbanian chakma cham cher cherokee chorasmian chrs
    common copt coptic cpmn cprt cuneiform cypriot cyprominoan cyrillic cyrl deseret deva devanagari diak divesakuru
    dogr dogra dsrt dupl duployan egyp egyptianhieroglyphs elba elbasan elym elymaic ethi ethiopic gara garay geor
    georgian glag glagolitic gong gonm goth gothic gran grantha greek grek gujarati gujr gukh gunjalagondi gurmukhi
    guru gurungkhema han hang hangul hani hanifirohingya hano hanunoo hatr hatran hebr hebrew hira hiragana hluw
    hmng hmnp hung imperialaramaic inherited inscriptionalpahlavi inscriptionalparthian ital java javanese kaithi
    kali kana kannada katakana kawi kayahli khar kharoshthi khitansmallscript khmer khmr khoj khojki khudawadi
    kiratrai kits knda krai kthi lana lao laoo latin latn lepc lepcha limb limbu lina linb lineara linearb lisu lyci
    lycian lydi lydian mahajani mahj maka makasar malayalam mand mandaic mani manichaean marc marchen masaramgondi
    medefaidrin medf meeteimayek mend mendekikakui merc mero meroiticcursive meroitichieroglyphs miao mlym modi mong
    mongolian mro mroo mtei mult multani myanmar mymr nabataean nagm nagmundari nand nandinagari narb nbat newa
    newtailue nko nkoo nshu nushu nyiakengpuachuehmong ogam ogham olchiki olck oldhungarian olditalic
    oldnortharabian oldpermic oldpersian oldsogdian oldsoutharabian oldturkic olduyghur olonal onao oriya orkh orya
    osage osge osma osmanya ougr pahawhhmong palm palmyrene pauc paucinhau perm phag phagspa phli phlp phnx
    phoenician plrd prti psalterpahlavi qaac qaai rejang rjng rohg runic runr samaritan samr sarb saur saurashtra
    sgnw sharada shavian shaw shrd sidd siddham signwriting sind sinh sinhala sogd sogdian sogo sora sorasompeng
    soyo soyombo sund sundanese sunu sunuwar sylo sylotinagri syrc syriac tagalog tagb tagbanwa taile taitham
    taiviet takr takri tale talu tamil taml tang tangsa tangut tavt telu telugu tfng tglg thaa thaana thai tibetan
    tibt tifinagh tirh tirhuta tnsa todhri todr toto tulutigalari tutg ugar ugaritic vai vaii vith vithkuqi wancho
    wara warangciti wcho xpeo xsux yezi yezidi yi yiii zanabazarsquare zanb zinh zyyy"""
)
_BINARY = _words(
    """ahex alnum alpha alphabetic asciihexdigit bidic bidicontrol bidim bidimirrored blank cased caseignorable
    changeswhencasefolded changeswhencasemapped changeswhenlowercased changeswhentitlecased changeswhenuppercased
    ci cwcf cwcm cwl cwt cwu dash defaultignorablecodepoint dep deprecated di dia diacritic ebase ecomp emod emoji
    emojicomponent emojimodifier emojimodifierbase emojipresentation epres ext extendedpictographic extender
    extpict graph graphemebase graphemeextend graphemelink grbase grext grlink hex hexdigit hyphen idc
    idcompatmathcontinue idcompatmathstart idcontinue ideo ideographic ids idsb idsbinaryoperator idst idstart
    idstrinaryoperator idsu idsunaryoperator joinc joincontrol loe logicalorderexception lower lowercase math mcm
    modifiercombiningmark nchar noncharactercodepoint oalpha odi ogrext oidc oids olower omath otheralphabetic
    otherdefaultignorablecodepoint othergraphemeextend otheridcontinue otheridstart otherlowercase othermath
    otheruppercase oupper patsyn patternsyntax patternwhitespace patws pcm prependedconcatenationmark print qmark
    quotationmark radical regionalindicator ri sd sentenceterminal softdotted space sterm term terminalpunctuation
    uideo unifiedideograph upper uppercase variationselector vs whitespace word wspace xidc xidcontinue xids
    xidstart"""
)
_AGES = frozenset(
    f"{prefix}{major}{dot}{minor}"
    for major, minors in (
        (1, "1"),
        (2, "01"),
        (3, "012"),
        (4, "01"),
        (5, "012"),
        (6, "0123"),
        (7, "0"),
        (8, "0"),
        (9, "0"),
        (10, "0"),
        (11, "0"),
        (12, "01"),
        (13, "0"),
        (14, "0"),
        (15, "01"),
        (16, "0"),
    )
    for minor in minors
    for prefix, dot in (("", "."), ("v", ""))
)
#: A property given as ``name=value``: the values each name takes.
_VALUES = {
    "gc": _GENERAL,
    "generalcategory": _GENERAL,
    "sc": _SCRIPTS,
    "script": _SCRIPTS,
    "scx": _SCRIPTS,
    "scriptextensions": _SCRIPTS,
    "age": _AGES,
}
#: What the compiled program of a property's class costs per copy (measured for common ones; else by kind).
_PROPERTY_COSTS = {
    name: cost
    for names, cost in (
        ("l letter", 42973),
        ("lu uppercaseletter", 26545),
        ("ll lowercaseletter", 27666),
        ("lt titlecaseletter", 552),
        ("lm modifierletter", 4991),
        ("lc casedletter", 9585),
        ("cased", 10392),
        ("upper uppercase", 27025),
        ("lower lowercase", 28187),
        ("alpha alphabetic", 47232),
        ("c other", 43150),
        ("n number", 9763),
        ("nd decimalnumber digit", 5124),
        ("p punctuation punct", 11915),
        ("po otherpunctuation", 11238),
        ("s symbol", 15839),
        ("sm mathsymbol", 3965),
        ("sc currencysymbol", 1725),
        ("m mark combiningmark", 18791),
        ("z separator", 607),
        ("han hani", 3628),
        ("latin latn", 2849),
        ("cyrillic cyrl", 1244),
        ("arabic arab", 3588),
        ("hiragana hira", 741),
        ("emoji", 7648),
        ("whitespace wspace space", 680),
        ("any", 964),
        ("ascii", 72),
    )
    for name in names.split()
}
#: The same under the i flag, where it differs much (measured): a class of one case gains the other one, and the
#: whole costs less than either half.
_INSENSITIVE_PROPERTY_COSTS = _PROPERTY_COSTS | {
    name: cost
    for names, cost in (
        ("lu uppercaseletter", 10667),
        ("ll lowercaseletter lc casedletter", 9620),
        ("lt titlecaseletter", 517),
        ("upper uppercase", 11131),
        ("lower lowercase", 10063),
    )
    for name in names.split()
}


def _normal(name: str) -> tuple[str, bool]:
    """A property name as the reference compares it, and whether it began with ``is``."""
    prefixed = name[:2].lower() == "is"
    rest = name[2:] if prefixed else name
    normal = "".join(c.lower() for c in rest if c not in " _-" and c < "\x80")
    if prefixed and normal == "c":  # ``isc`` names no property
        normal = "isc"
    return normal, prefixed


def _property_cost(body: str, *, insensitive: bool = False) -> int:
    """Whether ``body`` (what ``\\p{…}`` holds) names a property the reference knows (else :class:`_Invalid`);
    the estimated cost of its class (under the i flag when ``insensitive``)."""
    costs = _INSENSITIVE_PROPERTY_COSTS if insensitive else _PROPERTY_COSTS
    body = body.removeprefix("^")
    for separator in ("!=", "=", ":"):
        key, found, value = body.partition(separator)
        if found:
            values = _VALUES.get(_normal(key)[0])
            if values is None or _normal(value)[0] not in values:
                _fail()
            return costs.get(_normal(value)[0], 2246 if values is _SCRIPTS else 10000)
    normal, prefixed = _normal(body)
    if normal == "cs":  # the surrogates, known only by this name
        if prefixed:
            _fail()
    elif normal not in _GENERAL and normal not in _SCRIPTS and normal not in _BINARY:
        _fail()
    return costs.get(normal, 2246 if normal in _SCRIPTS else 10000)


_HEX = frozenset("0123456789abcdefABCDEF")
_SIMPLE_ESCAPES = {"f": 12, "n": 10, "r": 13, "t": 9, "v": 11}
#: Letters the lenient reader takes after a backslash (outside classes, and inside).
_LENIENT_LETTERS = frozenset("abdefhnrstvwzABDGHKNORSWZ")
_LENIENT_CLASS_LETTERS = frozenset("abdefhknrstvwzABDGHKRSW")
_LENIENT_VALUES = {"a": 7, "b": 8, "e": 27, **_SIMPLE_ESCAPES}
_WORD_BOUNDARIES = ("start", "end", "start-half", "end-half")
_STRICT_FLAGS = frozenset("imsUuxR")
#: Unicode's White_Space characters (what the strict reading skips in extended mode; Python's ``isspace`` has more).
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029"
    "\u202f\u205f\u3000"
)
#: What the lenient reading skips in extended mode, outside classes (observed: ``(?=a)(?x)(\v*)`` and
#: ``(?=a)(?x)(\u3000*)`` are taken, ``(?=a)(?x)(\r*)`` is not); in a ``\x{…}`` or a ``\b{…}`` too, where the strict
#: reading skips more (observed: ``(?x)\x{ 41}`` is taken, ``(?x)\x{\v41}`` is not).
_LENIENT_SPACE = frozenset("\t\n\r ")
#: What a pattern's character may be other than a plain one (outside a class, in the mode of the reading).
_NOT_PLAIN = frozenset("|)*+?{([\\.^$")
_PLAIN_RUN = re.compile(r"[^|)*+?{(\[\\.^$]+")
_PLAIN_RUN_EXTENDED = re.compile("[^|)*+?{(\\[\\\\.^$#" + "".join(sorted(_WHITE_SPACE)) + "]+")
_LENIENT_PLAIN_RUN_EXTENDED = re.compile(r"[^|)*+?{(\[\\.^$#\t\n\r ]+")
_ASCII_CLASS = re.compile(r"\[:\^?([a-z]+):\]")
_ASCII_CLASSES = _words("alnum alpha ascii blank cntrl digit graph lower print punct space upper word xdigit")
#: What a class escape's program costs per copy (the ECMA meanings: ``\\d`` and ``\\w`` are ASCII).
_PERL_COSTS = {"d": 72, "w": 96, "s": 744, "D": 1000, "W": 1108, "S": 2125}
#: What a class escape costs per copy in a pattern only the lenient reading reads to the end (one with a look-around
#: or a back-reference): that engine's ``\\d``, ``\\w`` and ``\\s`` are Unicode's (measured).
_UNICODE_PERL_COSTS = {"d": 5124, "w": 50000, "s": 680, "D": 12750, "W": 46500, "S": 1924}
#: The ranges of the ASCII class escapes (the ECMA meanings) and of ``\\s``.
_CLASS_SPANS = {
    "d": ((0x30, 0x39),),
    "w": ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)),
    "s": (
        (0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029),
        (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF),
    ),
}  # fmt: skip


#: Simple case folding (Unicode 16: the C and S mappings), as runs ``first[-last][/2]±delta``: each code point of
#: the run (every other one with ``/2``) folds to itself plus ``delta`` (hexadecimal). Static data, so that the
#: estimate does not follow the Unicode version of the Python that runs it.
_FOLDING = """
    41-5a+20 b5+307 c0-d6+20 d8-de+20 100-12e/2+1 132-136/2+1 139-147/2+1 14a-176/2+1 178-79 179-17d/2+1 17f-10c
    181+d2 182-184/2+1 186+ce 187+1 189-18a+cd 18b+1 18e+4f 18f+ca 190+cb 191+1 193+cd 194+cf 196+d3 197+d1 198+1
    19c+d3 19d+d5 19f+d6 1a0-1a4/2+1 1a6+da 1a7+1 1a9+da 1ac+1 1ae+da 1af+1 1b1-1b2+d9 1b3-1b5/2+1 1b7+db 1b8+1
    1bc+1 1c4+2 1c5+1 1c7+2 1c8+1 1ca+2 1cb-1db/2+1 1de-1ee/2+1 1f1+2 1f2-1f4/2+1 1f6-61 1f7-38 1f8-21e/2+1 220-82
    222-232/2+1 23a+2a2b 23b+1 23d-a3 23e+2a28 241+1 243-c3 244+45 245+47 246-24e/2+1 345+74 370-372/2+1 376+1
    37f+74 386+26 388-38a+25 38c+40 38e-38f+3f 391-3a1+20 3a3-3ab+20 3c2+1 3cf+8 3d0-1e 3d1-19 3d5-f 3d6-16
    3d8-3ee/2+1 3f0-36 3f1-30 3f4-3c 3f5-40 3f7+1 3f9-7 3fa+1 3fd-3ff-82 400-40f+50 410-42f+20 460-480/2+1
    48a-4be/2+1 4c0+f 4c1-4cd/2+1 4d0-52e/2+1 531-556+30 10a0-10c5+1c60 10c7+1c60 10cd+1c60 13f8-13fd-8 1c80-184e
    1c81-184d 1c82-1844 1c83-1c84-1842 1c85-1843 1c86-183c 1c87-1824 1c88+89c3 1c89+1 1c90-1cba-bc0 1cbd-1cbf-bc0
    1e00-1e94/2+1 1e9b-3a 1e9e-1dbf 1ea0-1efe/2+1 1f08-1f0f-8 1f18-1f1d-8 1f28-1f2f-8 1f38-1f3f-8 1f48-1f4d-8
    1f59-1f5f/2-8 1f68-1f6f-8 1f88-1f8f-8 1f98-1f9f-8 1fa8-1faf-8 1fb8-1fb9-8 1fba-1fbb-4a 1fbc-9 1fbe-1c05
    1fc8-1fcb-56 1fcc-9 1fd3-1c43 1fd8-1fd9-8 1fda-1fdb-64 1fe3-1c33 1fe8-1fe9-8 1fea-1feb-70 1fec-7 1ff8-1ff9-80
    1ffa-1ffb-7e 1ffc-9 2126-1d5d 212a-20bf 212b-2046 2132+1c 2160-216f+10 2183+1 24b6-24cf+1a 2c00-2c2f+30 2c60+1
    2c62-29f7 2c63-ee6 2c64-29e7 2c67-2c6b/2+1 2c6d-2a1c 2c6e-29fd 2c6f-2a1f 2c70-2a1e 2c72+1 2c75+1 2c7e-2c7f-2a3f
    2c80-2ce2/2+1 2ceb-2ced/2+1 2cf2+1 a640-a66c/2+1 a680-a69a/2+1 a722-a72e/2+1 a732-a76e/2+1 a779-a77b/2+1
    a77d-8a04 a77e-a786/2+1 a78b+1 a78d-a528 a790-a792/2+1 a796-a7a8/2+1 a7aa-a544 a7ab-a54f a7ac-a54b a7ad-a541
    a7ae-a544 a7b0-a512 a7b1-a52a a7b2-a515 a7b3+3a0 a7b4-a7c2/2+1 a7c4-30 a7c5-a543 a7c6-8a38 a7c7-a7c9/2+1
    a7cb-a567 a7cc+1 a7d0+1 a7d6-a7da/2+1 a7dc-a641 a7f5+1 ab70-abbf-97d0 fb05+1 ff21-ff3a+20 10400-10427+28
    104b0-104d3+28 10570-1057a+27 1057c-1058a+27 1058c-10592+27 10594-10595+27 10c80-10cb2+40 10d50-10d65+20
    118a0-118bf+20 16e40-16e5f+20 1e900-1e921+22
"""
_FOLD_RUN = re.compile(r"([0-9a-f]+)(?:-([0-9a-f]+))?(/2)?([+-][0-9a-f]+)")


def _fold_orbits() -> dict[int, tuple[int, ...]]:
    """Each code point that has another case: every code point simple case folding makes it equal to."""
    parent: dict[int, int] = {}

    def root(c: int) -> int:
        while parent.get(c, c) != c:
            c = parent[c]
        return c

    for match in _FOLD_RUN.finditer(_FOLDING):
        first = int(match.group(1), 16)
        last = int(match.group(2), 16) if match.group(2) else first
        delta = int(match.group(4), 16)
        for c in range(first, last + 1, 2 if match.group(3) else 1):
            a, b = root(c), root(c + delta)
            parent.setdefault(a, a)
            parent.setdefault(b, b)
            parent[max(a, b)] = min(a, b)
    members: dict[int, list[int]] = {}
    for c in parent:
        members.setdefault(root(c), []).append(c)
    return {c: tuple(sorted(orbit)) for orbit in members.values() for c in orbit}


@lru_cache(maxsize=1)
def _fold_tables() -> tuple[dict[int, tuple[int, ...]], list[int]]:
    """The orbits of :func:`_fold_orbits` and their code points in order: built on the first use of the i flag
    (most patterns never need them, and building them takes milliseconds)."""
    orbits = _fold_orbits()
    return orbits, sorted(orbits)


def _folded(found: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The code points ``found`` (merged spans) and all their other cases, as merged spans: the class the
    case-insensitive flag makes (a bounded amount of work, a few thousand code points at most)."""
    return list(_folded_spans(tuple(found)))


@lru_cache(maxsize=256)
def _folded_spans(found: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    orbits, cased = _fold_tables()
    starts = [low for low, _ in found]
    extra: list[tuple[int, int]] = []
    for low, high in found:
        for c in cased[bisect_left(cased, low) : bisect_right(cased, high)]:
            for other in orbits[c]:
                if low <= other <= high:
                    continue
                k = bisect_right(starts, other) - 1
                if k < 0 or found[k][1] < other:  # not in the class yet
                    extra.append((other, other))
    return tuple(_merged([*found, *extra])) if extra else found


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, overlapping and adjacent ones joined."""
    out: list[tuple[int, int]] = []
    for low, high in sorted(spans):
        if out and low <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return out


def _complement(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The code points not in ``spans`` (merged), as merged spans."""
    out: list[tuple[int, int]] = []
    start = 0
    for low, high in spans:
        if low > start:
            out.append((start, low - 1))
        start = high + 1
    if start <= 0x10FFFF:
        out.append((start, 0x10FFFF))
    return out


def _utf8_sequences(low: int, high: int) -> list[tuple[tuple[int, int], ...]]:
    """The UTF-8 byte-range sequences of the code points ``low``–``high`` (surrogates left out), in order: the
    range is cut where the encoding's length changes, then where a byte's range would not be whole."""
    out: list[tuple[tuple[int, int], ...]] = []
    pending = [
        (max(low, start), min(high, end))
        for start, end in ((0x10000, 0x10FFFF), (0xE000, 0xFFFF), (0x800, 0xD7FF), (0x80, 0x7FF), (0, 0x7F))
        if max(low, start) <= min(high, end)
    ]
    while pending:
        a, b = pending.pop()
        size = len(chr(a).encode("utf-8"))
        for i in range(1, size):
            mask = (1 << (6 * i)) - 1
            if a & ~mask != b & ~mask:
                if a & mask:
                    pending += [((a | mask) + 1, b), (a, a | mask)]
                    break
                if b & mask != mask:
                    pending += [(b & ~mask, b), (a, (b & ~mask) - 1)]
                    break
        else:
            first, last = chr(a).encode("utf-8"), chr(b).encode("utf-8")
            out.append(tuple(zip(first, last)))
    return out


def _trie_cost(found: list[tuple[int, int]]) -> int:
    """The estimated program size of a class outside ASCII (merged spans): its UTF-8 sequences make a trie that
    shares their common starts; each state and each transition has its measured cost."""
    edges: set[tuple[tuple[int, int], ...]] = set()
    inner = 0
    for low, high in found:
        for sequence in _utf8_sequences(low, high):
            for k in range(1, len(sequence) + 1):
                prefix = sequence[:k]
                if prefix not in edges:
                    edges.add(prefix)
                    inner += k < len(sequence)
    return 68 + 36 * len(edges) - 4 * (inner + 1)


def _set_cost(found: list[tuple[int, int]]) -> int:
    """The estimated program size of a class that is the code points ``found`` (merged spans)."""
    if not found:
        return 64
    single = len(found) == 1 and found[0][0] == found[0][1]
    if found[-1][1] <= 0x7F:  # ASCII
        return 32 if single else 64 + 8 * len(found)
    if single:  # one character: its bytes
        return 32 * len(chr(found[0][0]).encode("utf-8"))
    return _trie_cost(found)


@lru_cache(maxsize=4096)
def _orbit_cost(code: int) -> int | None:
    """What a character costs under the i flag: the class of all its cases; None when it has no other case."""
    orbit = _fold_tables()[0].get(code)
    return None if orbit is None else _set_cost(_merged((other, other) for other in orbit))


@lru_cache(maxsize=2)
def _insensitive_word_cost(letter: str) -> int:
    """What the ``\\w`` (``letter`` ``w``) or ``\\W`` (``W``) of the strict reading costs per copy under the i flag:
    ``\\w`` gains the Kelvin sign and the long s (other cases of ``k`` and ``s``), which ``\\W`` loses."""
    word = _folded(_merged(_CLASS_SPANS["w"]))
    return _set_cost(word if letter == "w" else _complement(word))


def _with_costs(base: int, costs: list[int]) -> int:
    """A class's estimated size: that of its characters (``base``) and of its sets (``costs``), the largest whole
    and half of the others."""
    if not costs:
        return base
    largest = max(costs)
    return max(largest, base) + (sum(costs) - largest) // 2


class _Item:
    """What a piece of the pattern is: for the repetition and look-behind rules, the nesting limit and the size
    estimate.

    The size estimate follows how the lenient engine builds its programs (observed). A piece is *hard* when that
    engine must run it itself: a look-around, a back-reference and any group one names, an atomic group or a
    possessive repetition, a word boundary, ``\\G``, ``\\K``, ``\\Z``, ``\\R``, and whatever holds one. Where it runs a
    piece (a *hard context*: between the hard items of a concatenation, in a repetition of a hard piece but an
    optional one, and all within), a repetition, an alternation or a group costs nothing by itself; the inside of a
    look-around or an atomic group is back in an easy context. The easy pieces it hands on are compiled, each
    to a program of its own that must stay under the limit: the run of easy items of a fixed length that starts a
    concatenation, the run of easy items after its last hard one (in a hard context only one of a fixed length),
    and any easy piece met in an easy context (a look-behind's inside of varying length per branch). A run of plain
    characters becomes no program. ``easy`` and ``tough`` are the largest program a piece yields in an easy and
    in a hard context.
    """

    __slots__ = (
        "cost",
        "easy",
        "fixed",
        "flawed",
        "hard",
        "kind",
        "least",
        "literal",
        "needs",
        "nest",
        "parts",
        "repeatable",
        "tough",
        "unwritable",
    )

    def __init__(
        self,
        cost: int,
        *,
        repeatable: bool = True,
        nest: int = 0,
        hard: bool = False,
        fixed: bool = True,
        least: int = 1,
        literal: bool = False,
        easy: int | None = None,
        tough: int | None = None,
        kind: str = "",
        parts: Sequence[_Item] = (),
        flawed: bool = False,
        needs: int = 0,
        unwritable: int = 0,
    ) -> None:
        self.cost = cost  # the estimated size as (a part of) one program
        # Whether a quantifier may follow it: not a look-around, \G, \K or nothing, nor a group that captures
        # nothing holding only one of those (a capturing or an atomic group always may).
        self.repeatable = repeatable
        self.nest = nest
        self.hard = hard  # the lenient engine runs it itself (it needs backtracking)
        self.fixed = fixed  # it always matches the same number of characters (``least``)
        self.least = least
        self.literal = literal  # plain characters only
        # The largest program it yields in an easy context (a whole easy piece is one program) and in a hard one.
        own = 0 if literal or hard else cost
        self.easy = own if easy is None else easy
        self.tough = own if tough is None else tough
        # "alternation", "concatenation", "ahead" (a positive look-ahead), "repetition" (parts unset), or ""
        self.kind = kind
        self.parts = parts  # the branches, the items, or the look-ahead's inside
        # It holds a part the lenient engine refuses only when it compiles it (a look-behind it cannot match): the
        # pattern is refused unless a repetition {0} around drops the part uncompiled.
        self.flawed = flawed
        # How many groups around it the text the lenient engine writes out of an easy one must still hold (a class
        # whose rest closes groups it did not open, see _Reader.lenient_rest); for a hard one, 0.
        self.needs = needs
        # Where such a rest lacks its groups, in the program its part lands in: _IN_EASY when the piece is in an
        # easy context (for a hard piece only: an easy one is a whole program there, which ``needs`` tells),
        # _IN_HARD when in a hard one.
        self.unwritable = unwritable

    def but(self, **changes: Any) -> _Item:
        """A copy of this item with the fields ``changes`` names set as given (the others as they are)."""
        copy = object.__new__(_Item)
        for name in _Item.__slots__:
            setattr(copy, name, changes[name] if name in changes else getattr(self, name))
        return copy


def _program(items: Sequence[_Item]) -> int:
    """The size of the one program a run of easy items is compiled to (none for plain characters)."""
    if all(item.literal for item in items):
        return 0
    return sum(item.cost for item in items)


def _ends(items: Sequence[_Item], *, hard: bool) -> tuple[int, int]:
    """Where the runs of easy items at the start and at the end of a concatenation of ``items`` (some hard) end
    and start when it is compiled in a hard or an easy context: at the start those of a fixed length, at the end
    those of a fixed length in a hard context, any in an easy one."""
    n = len(items)
    start = 0
    while start < n and items[start].fixed and not items[start].hard:
        start += 1
    end = n
    while end > start and not items[end - 1].hard and (items[end - 1].fixed or not hard):
        end -= 1
    return start, end


def _split(items: Sequence[_Item], *, hard: bool) -> int:
    """The largest program of a concatenation of ``items`` (some hard) compiled in a hard or an easy context: the
    runs of :func:`_ends` make one program each, and each item between is compiled in a hard context."""
    start, end = _ends(items, hard=hard)
    return max(_program(items[:start]), _program(items[end:]), *(item.tough for item in items[start:end]))


#: The bits of :attr:`_Item.unwritable`.
_IN_EASY, _IN_HARD = 1, 2


#: What the lenient engine writes in a group of its own when it writes out an easy piece: in an alternation (or
#: alone, but for the whole pattern), in a concatenation, in a repetition (observed: ``a(?:b[]0-[b])(])``,
#: ``a(?:b|[]0-[b])(])``, ``(?:b[]0-[b])(])*`` and ``(?:(?:[]0-[b])(])*){2}`` are taken, ``a(?:[]0-[b])(])``
#: and ``c|(?:b[]0-[b])(])`` are not). A greedy ``*``, ``+`` or ``?`` (or the same count) of one of those is one
#: repetition, no group (observed: ``(?:(?:[]0-[b])(])+)?`` is not taken, ``(?:(?:[]0-[b])(])+?)?`` and
#: ``(?:(?:[]0-[b])(])+){1}`` are).
_IN_ALTERNATION = frozenset({"alternation"})
_IN_CONCATENATION = frozenset({"alternation", "concatenation"})
_IN_SIMPLE_REPETITION = frozenset({"alternation", "concatenation", "repetition"})
_IN_REPETITION = _IN_SIMPLE_REPETITION | {"simple repetition"}
_SIMPLE_BOUNDS = ((0, None), (1, None), (0, 1))


def _written_needs(item: _Item, grouped: frozenset[str]) -> int:
    """The groups an easy item still needs (:attr:`_Item.needs`) written out as a part of a larger piece, where
    the lenient engine writes the kinds of piece ``grouped`` names in a group of their own."""
    needs = item.needs
    if needs and item.kind in grouped:
        needs -= 1
    return needs


def _unwritable(item: _Item, *, hard: bool) -> bool:
    """Whether a part of ``item`` lacks the groups its rest needs when ``item`` is in a hard or an easy context
    (an easy item in an easy context is one program: it must need none)."""
    if hard:
        return bool(item.unwritable & _IN_HARD)
    return bool(item.unwritable & _IN_EASY) if item.hard else item.needs > 0


def _alone_unwritable(item: _Item) -> bool:
    """:func:`_unwritable` for ``item`` in an easy context where the lenient engine writes an easy one out as a
    program of its own that is a part of a larger pattern: an alternation in a group of its own (observed:
    ``(?=c|[]0-[b])(])a``, ``(?=a)(?>c|[]0-[b])(])`` and ``(?:\\b|(?:c|[]0-[b])(]))`` are taken; not so in a
    group a back-reference names, ``(c|[]0-[b])(])\\1`` is not)."""
    if item.hard:
        return bool(item.unwritable & _IN_EASY)
    return _written_needs(item, _IN_ALTERNATION) > 0


def _split_unwritable(items: Sequence[_Item], *, hard: bool) -> bool:
    """:func:`_unwritable` for a concatenation with the programs of :func:`_split`: the items of the runs at its
    start and end are written out one after the other, as if at its top (``\\b(?:b|[]0-[b])(])`` is taken,
    ``\\ba(?:b[]0-[b])(])`` is not); each item between is in a hard context."""
    start, end = _ends(items, hard=hard)
    return any(_written_needs(item, _IN_ALTERNATION) > 0 for item in (*items[:start], *items[end:])) or any(
        _unwritable(item, hard=True) for item in items[start:end]
    )


#: A plain character's item by the length of its UTF-8 form (items are never changed, so they may be shared).
_PLAIN_ITEMS = [_Item(32 * length, literal=True) for length in range(5)]


def _plain_item(code: int) -> _Item:
    """What :meth:`_Reader.character` gives for a plain character outside the i flag."""
    return _PLAIN_ITEMS[1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4]


def _sequence(items: Sequence[_Item], *, nest: int) -> _Item:
    """A concatenation of ``items`` (one item stands for itself; none is the empty pattern)."""
    if not items:
        return _Item(0, repeatable=False, nest=nest, least=0, literal=True)
    if len(items) == 1:
        return items[0].but(nest=nest)  # the lenient reading sees through it: repeatable as its item is
    cost = sum(item.cost for item in items)
    hard = any(item.hard for item in items)
    needs = unwritable = 0
    if any(item.needs or item.unwritable for item in items):
        unwritable = _IN_HARD * _split_unwritable(items, hard=True)
        if hard:
            unwritable |= _IN_EASY * _split_unwritable(items, hard=False)
        else:
            needs = max(_written_needs(item, _IN_CONCATENATION) for item in items)
    return _Item(
        cost,
        nest=nest,
        hard=hard,
        fixed=all(item.fixed for item in items),
        least=sum(item.least for item in items),
        literal=all(item.literal for item in items),
        easy=_split(items, hard=False) if hard else None,
        tough=_split(items, hard=True),
        kind="concatenation",
        parts=items,
        flawed=any(item.flawed for item in items),
        needs=needs,
        unwritable=unwritable,
    )


def _behind(inner: _Item) -> int:
    """The largest program of a look-behind's inside: when its length varies, each branch of an alternation is a
    look-behind of its own."""
    if inner.kind == "alternation" and not inner.fixed:
        return max(_behind_branch(branch) for branch in inner.parts)
    return _behind_branch(inner)


def _behind_matchable(inner: _Item) -> bool:
    """Whether the lenient engine can match a look-behind's inside: one of a fixed length always; else, each branch
    of an alternation on its own, a branch of a fixed length, an easy one (compiled whole, matched backwards), or a
    concatenation whose hard items each have a fixed length. It looks no deeper: a hard item of varying length is
    refused even when its own parts would do, as in ``(?<=(?:a+\\b)c)`` or ``(?<=x|(?:y|z+\\b))``."""
    if inner.fixed:
        return True
    branches = inner.parts if inner.kind == "alternation" else (inner,)
    return all(
        branch.fixed
        or not branch.hard
        or (branch.kind == "concatenation" and all(item.fixed for item in branch.parts if item.hard))
        for branch in branches
    )


def _behind_branch(inner: _Item) -> int:
    if inner.fixed:
        return inner.easy
    if not inner.hard:
        return inner.cost  # compiled whole, to be matched backwards
    if inner.kind != "concatenation":
        return inner.easy
    # Each run of easy items between the hard ones is compiled whole, the hard ones in an easy context.
    worst = run = 0
    for item in inner.parts:
        if item.hard:
            worst = max(worst, run, item.easy)
            run = 0
        else:
            run += item.cost
    return max(worst, run)


#: What the lenient engine is handed written out, after a backslash the strict reading reads: ``\\cX`` (a control
#: character) and, in a class, the class escapes (see :meth:`_Reader.char_class`).
_WRITTEN_OUT = frozenset("cdDsSwW")
#: A word boundary (``\\b{start}``, ``\\<``, ...).
_BOUNDARY = _Item(8, hard=True, least=0)


def _peek_space(text: str, k: int) -> str | None:
    """The character from ``k`` on that tells the strict reading in extended mode whether a class's hyphen is a
    range's: white space is passed over, and one ``#``, but not a comment's text (observed: ``(?x)["-#]\\n !]`` is
    ``"``, ``-`` and ``!``)."""
    n = len(text)
    hash_seen = False
    while k < n:
        c = text[k]
        if c == "#" and not hash_seen:
            hash_seen = True
        elif c not in _WHITE_SPACE:
            return c
        k += 1
    return None


#: A group of flags alone, after its "(" (it opens no group).
_FLAG_GROUP = re.compile(r"\?[A-Za-z-]*\)")


def _groups_closed(text: str) -> int:
    """How many groups opened before it a class's rest ``text`` closes (see :meth:`_Reader.lenient_rest`): the most
    its ``)`` outnumber its ``(`` from its start on, escapes and classes passed over."""
    depth = lowest = k = 0
    n = len(text)
    while k < n:
        c = text[k]
        k += 1
        if c == "\\":
            k += 1
        elif c == "[":
            end = _lenient_class_end(text, k - 1)
            if end < 0:
                break
            k = end
        elif c == "(":
            flags = _FLAG_GROUP.match(text, k)
            if flags is None:
                depth += 1
            else:
                k = flags.end()
        elif c == ")":
            depth -= 1
            lowest = min(lowest, depth)
    return -lowest


def _comment_group_end(text: str, k: int) -> int:
    """Where the comment group ``(?#…)`` opening at ``k`` ends (past its ``)``; a backslash in it escapes the next
    character, so ``(?#\\))`` is one comment), -1 if it never does."""
    n = len(text)
    k += 3
    while k < n and text[k] != ")":
        k += 2 if text[k] == "\\" else 1
    return k + 1 if k < n else -1


def _lenient_class_end(text: str, k: int) -> int:
    """Where the class opening at ``k`` ends (past its ``]``) as the lenient engine finds it, -1 if it never does:
    each ``[`` opens a class (but an ASCII class ``[:alpha:]``), in which a ``]`` first (after an optional ``^``) is
    a character."""
    n = len(text)
    depth = 0
    while k < n:
        c = text[k]
        k += 1
        if c == "\\":
            k += 1
        elif c == "[":
            match = _ASCII_CLASS.match(text, k - 1) if depth else None
            if match is not None and match.group(1) in _ASCII_CLASSES:
                k = match.end()
                continue
            depth += 1
            k += text.startswith("^", k)
            k += text.startswith("]", k)
        elif c == "]":
            depth -= 1
            if not depth:
                return k
    return -1


class _Reader:
    """Both readings of one pattern in a single pass: each construct is checked against the rules of the readings
    still going (the strict one until the first look-around or back-reference), raising :class:`_Invalid`."""

    def __init__(
        self,
        text: str,
        *,
        unicode: bool = False,
        referenced: frozenset[int] = frozenset(),
        lenient_flags: bool = False,
        rest: bool = False,
        written: dict[int, str] | None = None,
        apart: int = -1,
        placeholder: tuple[int, int] = (-1, 0),
    ) -> None:
        self.text = text
        # The rest of a class the strict reading's engine alone reads (see lenient_rest): it takes any quantifier
        # on any item but nothing, and ``\\b{`` starts a count.
        self.rest = rest
        self.pos = 0
        # The class escapes cost what the lenient engine's Unicode classes cost (see regex_ok).
        self.perl_costs = _UNICODE_PERL_COSTS if unicode else _PERL_COSTS
        # The groups back-references name (found by an earlier reading: a reference may come after its group).
        self.referenced = referenced
        self.strict = True  # the strict reading goes on (no look-around or back-reference met yet)
        self.bell = False
        self.captures = 0
        self.names: dict[str, int] = {}
        self.numbers: list[int] = []  # the groups back-references name, checked once every group is known
        self.lengths: dict[int, int] = {}  # the length of each closed capture group of a fixed length
        # The flags of the reading in charge (the strict one while it goes on): x, and i (for the size estimate).
        self.extended = False
        self.insensitive = False
        # The lenient reading's own flags. A flag group alone, ``(?x)``, holds to the end of the group around it
        # in the strict reading, but in the lenient one only when that group is a non-capturing one (``(?:…)``,
        # ``(?i:…)``): out of a capturing group, a look-around or an atomic group it goes on to the pattern's end
        # (observed). ``lenient_flags``: the lenient reading's flags rule from the start (a second reading, when
        # the two readings' flags parted while both went on, see regex_ok).
        self.lenient_extended = False
        self.lenient_insensitive = False
        self.lenient_flags = lenient_flags
        self.parted = False  # the two readings' flags differed while both went on
        # Where the strict reading last skipped white space the lenient one, in extended mode too, takes as a
        # character (the end of that white space; -1 for nowhere): from there they read the text otherwise, so the
        # lenient reading is done again on its own (see regex_ok).
        self.spaced = -1
        self.atom_end = 0  # where the last item read by a concatenation ends (before its quantifiers)
        self.behind = 0  # look-behinds around the reader
        self.open_groups = 0  # groups around the reader
        self.written_rest_cost = -1  # what a class written out with a rest costs (see both_classes)
        # Where the class a rest follows stands in the rest's text, what it costs (see lenient_rest).
        self.placeholder, self.placeholder_cost = placeholder
        self.in_behind = False  # the innermost look-around around the reader is a look-behind
        self.escapes: set[str] = set()  # the class escapes of the class being read
        # Where the strict reading read a "\\c" (or a class escape in a class), by position: the letter (see
        # class_member). A second reading with the lenient reading's flags is handed the first one's.
        self.written: dict[int, str] = {} if written is None else written
        # Where the two readings first end a class apart (see char_class), -1 for nowhere: noted by a first reading;
        # the second one reads on from there by the lenient reading's rules alone.
        self.apart = apart

    def end_strict(self) -> None:
        """The strict reading stops (at a look-around or a back-reference): the lenient one's flags rule. When
        they parted from the strict one's, this reading may have read the lenient reading's text otherwise so far
        (:class:`_Parted`: a second reading takes over)."""
        if (self.parted or self.spaced >= 0) and not self.lenient_flags:
            raise _Parted(self)
        self.strict = False
        self.extended, self.insensitive = self.lenient_extended, self.lenient_insensitive

    # -- characters --------------------------------------------------------------------------------------------

    def peek(self, offset: int = 0) -> str | None:
        k = self.pos + offset
        return self.text[k] if k < len(self.text) else None

    def skip_space(self, *, comments: bool = True) -> None:
        """Skip what lies between the parts of a pattern: white space and ``#`` comments in extended mode and, for
        the lenient reading alone (the strict one refuses them), comment groups ``(?#…)`` outside classes, in
        which a backslash escapes the next character (``(?#\\))`` is one comment)."""
        # The strict reading's white space (outside a class, where the lenient one reads too: see spaced).
        first, outside = self.strict and not self.lenient_flags, comments
        comments = comments and not self.strict
        if not (self.extended or comments):
            return
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if self.extended and c in (_WHITE_SPACE if first else _LENIENT_SPACE):
                self.pos += 1
                if first and outside and self.lenient_extended and c not in _LENIENT_SPACE:
                    self.spaced = self.pos
            elif self.extended and c == "#":
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end + 1
            elif comments and text.startswith("(?#", self.pos):
                end = _comment_group_end(text, self.pos)
                if end < 0:
                    _fail()  # the comment never closes
                self.pos = end
            else:
                return

    # -- the whole pattern -------------------------------------------------------------------------------------

    def read(self) -> int:
        """Read the whole pattern (:class:`_Invalid` when a rule says no); the estimated size of its largest
        program."""
        item = self.alternation(0)
        # A ")" that closes nothing, or a part the lenient engine refuses when it compiles the pattern.
        if self.pos < len(self.text) or item.flawed:
            _fail()
        if self.strict and self.bell:
            _fail()
        for number in self.numbers:
            if number > self.captures:
                _fail()
        # A positive look-ahead that ends the pattern is matched as a plain part after a group holding the rest.
        if item.kind == "ahead":
            item = _sequence([_Item(64, least=0), item.parts[0]], nest=0)
        elif item.kind == "concatenation" and item.parts[-1].kind == "ahead":
            rest = _sequence(item.parts[:-1], nest=0)
            # (a group the lenient engine writes out, an alternation in one of its own in it: observed,
            # "(?:[]0-[b])(])*(?=a)" and "(?:c|(?:[]0-[b]))((])+)(?=a)" are taken)
            needs = 0 if rest.hard else max(_written_needs(rest, _IN_ALTERNATION) - 1, 0)
            unwritable = _IN_HARD * _unwritable(rest, hard=True)
            if rest.hard:
                unwritable |= _IN_EASY * _unwritable(rest, hard=False)
            group = _Item(
                rest.cost + 64,
                hard=rest.hard,
                fixed=rest.fixed,
                least=rest.least,
                easy=rest.easy if rest.hard else None,
                tough=rest.tough,
                needs=needs,
                unwritable=unwritable,
            )
            item = _sequence([group, item.parts[-1].parts[0]], nest=0)
        if _unwritable(item, hard=False):
            _fail()  # a class's rest lacks the groups it closes (see lenient_rest)
        # An easy pattern is one program; a hard one is run by the lenient engine, with its easy parts compiled
        # (a class's rest is one program of the strict reading's engine).
        return item.easy if item.hard and not self.rest else item.cost

    def alternation(self, depth: int) -> _Item:
        branches = [self.concatenation(depth)]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.concatenation(depth))
        if len(branches) == 1:
            return branches[0]
        nest = max(b.nest for b in branches) + 1  # an alternation is a level of its own in the strict reading
        if self.strict and nest > _NEST_LIMIT:
            _fail()
        hard = any(b.hard for b in branches)
        least = min(b.least for b in branches)
        needs = unwritable = 0
        if any(b.needs or b.unwritable for b in branches):
            # The lenient engine runs the alternation of a hard context (or a hard one), each branch a program.
            unwritable = _IN_HARD * any(_unwritable(b, hard=True) for b in branches)
            if hard:
                unwritable |= _IN_EASY * any(_alone_unwritable(b) for b in branches)
            else:
                needs = max(_written_needs(b, _IN_ALTERNATION) for b in branches)
        return _Item(
            sum(b.cost for b in branches) + 8 * len(branches),
            nest=nest,
            hard=hard,
            fixed=all(b.fixed and b.least == least for b in branches),
            least=least,
            easy=max(b.easy for b in branches) if hard else None,
            tough=max(b.tough for b in branches),
            kind="alternation",
            parts=branches,
            flawed=any(b.flawed for b in branches),
            needs=needs,
            unwritable=unwritable,
        )

    def concatenation(self, depth: int) -> _Item:
        nest = 0
        items: list[_Item] = []
        while True:
            self.skip_space()
            c = self.peek()
            if c is None or c == "|" or c == ")":
                break
            if c in "*+?":
                if not (items and self.spaced > self.atom_end):
                    _fail()  # nothing to repeat
                # The strict reading repeats a repetition (the lenient reading takes none, but here it repeats
                # white space the strict one skipped: observed, "(?x)a?\u3000*" is taken, "(?x)a? *" is not).
                items[-1] = self.repetitions(items[-1])
                continue
            if self.pos == self.placeholder:
                self.pos += 1
                item = _Item(self.placeholder_cost)
            elif c == "{":
                if self.strict:
                    _fail()  # nothing to repeat
                self.pos += 1
                item = _Item(32, literal=True)
            elif c not in _NOT_PLAIN and not self.insensitive:
                # A run of plain characters: each but the last (which a quantifier may follow) is its own item,
                # as the step by step reading below makes it, without that reading's calls per character.
                if not self.extended:
                    plain = _PLAIN_RUN
                elif self.strict and not self.lenient_flags:
                    plain = _PLAIN_RUN_EXTENDED
                else:
                    plain = _LENIENT_PLAIN_RUN_EXTENDED
                run = plain.match(self.text, self.pos)
                assert run is not None
                end = run.end() - 1
                if end > self.pos:
                    items.extend(_plain_item(code) for code in map(ord, self.text[self.pos : end]))
                    self.pos = end
                self.pos += 1
                item = _plain_item(ord(self.text[end]))
            else:
                found = self.atom(depth)
                if found is None:  # a flag group: nothing a quantifier may repeat
                    self.skip_space()
                    if self.quantifier_follows():
                        _fail()
                    continue
                item = found
            self.atom_end = self.pos
            item = self.repetitions(item)
            if self.strict and item.nest > _NEST_LIMIT:
                _fail()
            nest = max(nest, item.nest)
            items.append(item)
        if len(items) > 1:  # so is a concatenation of two items or more
            nest += 1
            if self.strict and nest > _NEST_LIMIT:
                _fail()
        return _sequence(items, nest=nest)

    def quantifier_follows(self) -> bool:
        """Whether a quantifier is at the reader (a ``{`` only when it starts a count the reading takes)."""
        c = self.peek()
        if c is None:
            return False
        if c in "*+?":
            return True
        if c != "{":
            return False
        if self.strict:
            return True
        start = self.pos
        try:
            return self.lenient_count() is not None
        finally:
            self.pos = start

    # -- repetitions -------------------------------------------------------------------------------------------

    def count(self) -> tuple[int, int | None]:
        """The count the strict reading requires at a ``{`` (``{n}``, ``{n,}`` or ``{n,m}`` with ``n <= m``, spaces
        allowed around the numbers; in extended mode white space and comments around the numbers and between their
        digits too: ``(?x)a{2 4#\n1}`` is ``a{241}``, observed), consumed."""
        text, n = self.text, len(self.text)

        def gap(k: int) -> int:
            while k < n:
                if text[k] in _WHITE_SPACE:
                    k += 1
                elif text[k] == "#" and self.extended:
                    end = text.find("\n", k)
                    k = n if end < 0 else end + 1
                else:
                    break
            return k

        def number(k: int) -> tuple[int | None, int]:
            k = gap(k)
            found: list[str] = []
            while k < n and "0" <= text[k] <= "9":
                found.append(text[k])
                k = gap(k + 1) if self.extended else k + 1
            digits = "".join(found)
            k = gap(k)
            if not digits:
                return None, k
            value = _decimal(digits)
            if value is None or value > 0xFFFFFFFF:
                _fail()  # beyond 32 bits: refused by both readings
            return value, k

        low, k = number(self.pos + 1)
        if low is None:
            _fail()
        high: int | None = low
        if k < n and text[k] == ",":
            # Out of extended mode a "}" right after the comma leaves the count open; anything else starts its
            # upper bound, white space included (observed: "a{2, 3}" is taken, "a{2, }" is not; "(?x)a{2, }" is).
            closed = not self.extended and text.startswith("}", k + 1)
            high, k = number(k + 1)
            if high is not None and high < low:
                _fail()
            if high is None and not (self.extended or closed):
                _fail()
        if k >= n or text[k] != "}":
            _fail()
        self.pos = k + 1
        return low, high

    def lenient_count(self) -> tuple[int, int | None] | None:
        """The count the lenient reading sees at a ``{`` (``{n}``, ``{n,}``, ``{,m}``, ``{,}``, ``{n,m}``, bounds
        in any order), consumed; None (nothing consumed) when it reads a plain ``{``. Around the numbers and the
        comma it skips what :meth:`skip_space` skips (observed: ``(?=a)(?x)a{2 #c\\n}*`` and ``(?=a)a{2(?#c)}*``
        are not taken, the count leaving the ``*`` nothing to repeat)."""
        found = self.lenient_count_parts()
        if found is None:
            return None
        low, comma, high, end = found
        if not (low or comma):
            return None
        if high and not comma:
            return None  # two numbers apart (observed: "(?=a)(?x)\\K{2 4}" is taken)
        if _beyond_64_bits(low) or _beyond_64_bits(high):
            # A number the lenient reading cannot parse: it reads a plain "{" (the strict one refuses it).
            if self.strict:
                _fail()
            return None
        least, most = _decimal(low or "0"), _decimal(high or "0")
        if least is None or most is None or least > 0xFFFFFFFF or most > 0xFFFFFFFF:
            _fail()  # beyond 32 bits: refused by both readings
        self.pos = end
        if not comma:
            return least, least
        return least, (most if high else None)

    def lenient_gap(self, k: int) -> int:
        """Where what the lenient reading skips in braces (a count, ``\\b{…}``) from ``k`` on ends: its white space
        and ``#`` comments in extended mode, comment groups ``(?#…)`` (see skip_space); -1 for a comment that never
        ends."""
        text, n = self.text, len(self.text)
        while k < n:
            c = text[k]
            if self.extended and c in _LENIENT_SPACE:
                k += 1
            elif self.extended and c == "#":
                k = text.find("\n", k) + 1
                if not k:
                    return -1
            elif not self.strict and text.startswith("(?#", k):
                k = _comment_group_end(text, k)
                if k < 0:
                    return -1
            else:
                break
        return k

    def lenient_count_parts(self) -> tuple[str, str, str, int] | None:
        """The parts of a count at the ``{`` at the reader as the lenient reading finds them, each run of digits
        taken whole (its low digits, its comma, its high digits, where it ends), without consuming them; None when
        no ``}`` ends them. Read by hand, in time linear in what it passes over."""
        text, n = self.text, len(self.text)
        gap = self.lenient_gap

        def digits(k: int) -> int:
            while k < n and "0" <= text[k] <= "9":
                k += 1
            return k

        parts: list[str] = []
        k = self.pos + 1
        for step in range(3):
            k = gap(k)
            if k < 0:
                return None
            if step == 1:  # the comma
                parts.append("," if k < n and text[k] == "," else "")
                k += len(parts[-1])
            else:
                end = digits(k)
                parts.append(text[k:end])
                k = end
        k = gap(k)
        if k < 0 or k >= n or text[k] != "}":
            return None
        return parts[0], parts[1], parts[2], k + 1

    def quantifier(self, item: _Item) -> _Item | None:
        """One quantifier of the lenient reading at the reader (``*``, ``+``, ``?`` or a count, then ``?`` for
        lazy and ``+`` for possessive), applied to ``item``; None (nothing consumed) when there is none. The strict
        reading must take a count the lenient one takes."""
        self.skip_space()
        c = self.peek()
        if c is None:
            return None
        start = self.pos
        flawed = item.flawed
        if c in "*+?":
            self.pos += 1
            cost = item.cost + 40
            fixed = False
            low, optional = (1 if c == "+" else 0), c == "?"
            bounds: tuple[int, int | None] = (low, 1 if optional else None)
        elif c == "{":
            found = self.lenient_count()
            if found is None:
                return None
            bounds = found
            reverse = bounds[1] is not None and bounds[0] > bounds[1]
            if reverse and self.in_behind:
                flawed = True  # bounds in reverse order: taken but in a look-behind (observed)
            elif bounds[1] == 0:
                flawed = False  # the item is dropped, never compiled
            fixed = bounds[0] == bounds[1]
            if self.strict:
                end, self.pos = self.pos, start
                self.count()
                if self.pos != end:  # pragma: no cover - both readings read a count without spaces alike
                    _fail()
            # Bounds in reverse order cost the lower bound's copies and a little more (observed: ``a{5,2}`` costs
            # five copies of ``a`` and one more, ``(?:ab){2,1}`` two copies of ``ab`` and one of ``a``).
            cost = item.cost * bounds[0] + 32 if reverse else self.repeated(item.cost, *bounds)
            low, optional = bounds[0], bounds == (0, 1)
        else:
            return None
        if not (item.repeatable or self.rest or self.spaced > self.atom_end):
            _fail()  # (the lenient reading may repeat white space the strict one skipped, which repeats anything)
        self.skip_space()
        lazy = self.peek() == "?"
        if lazy:  # (a "+" right after it makes the repetition possessive too)
            self.pos += 1
        simple = not lazy and bounds in _SIMPLE_BOUNDS
        # The lenient engine runs a repetition of a hard item itself (it costs nothing by itself); an optional
        # item stays in the context it is in, any other goes into a hard one.
        needs = unwritable = 0
        if item.needs or item.unwritable:
            unwritable = _IN_HARD * _unwritable(item, hard=True)
            if item.hard:
                unwritable |= _IN_EASY * _unwritable(item, hard=not optional)
            else:
                needs = _written_needs(item, _IN_SIMPLE_REPETITION if simple else _IN_REPETITION)
        repeated = _Item(
            cost,
            nest=item.nest + 1,
            hard=item.hard,
            fixed=fixed and item.fixed,
            least=min(item.least * low, _LEAST_CAP),
            easy=(item.easy if optional else item.tough) if item.hard else None,
            tough=item.tough,
            flawed=flawed,
            kind="simple repetition" if simple else "repetition",
            needs=needs,
            unwritable=unwritable,
        )
        if self.peek() == "+":  # possessive: an atomic group, hard, whose inside is in an easy context
            self.pos += 1
            unwritable = (_IN_EASY | _IN_HARD) * _unwritable(repeated, hard=False)
            return repeated.but(hard=True, tough=repeated.easy, needs=0, unwritable=unwritable)
        return repeated

    def repetitions(self, item: _Item) -> _Item:
        repeated = self.quantifier(item)
        if repeated is not None:
            item = repeated
        if not self.strict:
            return item
        # The strict reading stacks further counts on the item (any count: spaces allowed); the lenient one reads
        # each as plain characters whose closing "}" may take a quantifier of its own.
        while True:
            self.skip_space()
            if self.rest:
                repeated = self.quantifier(item)
                if repeated is not None:
                    item = repeated
                    continue
            if self.peek() != "{":
                break
            start = self.pos
            self.count()
            nest = item.nest + 1
            parts = [item, _Item(32 * (self.pos - start), least=self.pos - start, literal=True)]
            brace = self.quantifier(_Item(0, literal=True))
            if brace is not None:
                parts.append(brace)
                nest += 1
            item = _sequence(parts, nest=nest)
        if item.nest > _NEST_LIMIT:
            _fail()
        return item

    @staticmethod
    def repeated(cost: int, low: int, high: int | None) -> int:
        """The estimated size of ``low`` to ``high`` (None: no bound) copies of an item of size ``cost``: each
        copy it must match costs the item, each optional one the item and 40 (observed: ``a{0,N}`` is taken up
        to N = 145,631), and an unbounded tail 40 after at least one copy (``(?:a{2,}){N}`` up to N = 100,822;
        ``{0,}`` is ``*``, one copy and the tail)."""
        if high is None:
            return cost * max(low, 1) + 40
        return cost * low + (cost + 40) * (high - low)

    # -- atoms -------------------------------------------------------------------------------------------------

    def atom(self, depth: int) -> _Item | None:
        """The item at the reader; None for a flag group."""
        c = self.text[self.pos]
        if c == "(":
            return self.group(depth)
        if c == "[":
            return self.char_class()
        if c == "\\":
            return self.escape()
        self.pos += 1
        if c == ".":
            return _Item(1000)
        if c in "^$":
            return _Item(8, least=0)
        return self.character(ord(c))

    def character(self, code: int) -> _Item:
        """A plain character; under the i flag, a class of all its cases when it has others (still plain)."""
        cost = _orbit_cost(code) if self.insensitive else None
        if cost is not None:
            return _Item(cost, literal=True)
        return _plain_item(code)

    def group(self, depth: int) -> _Item | None:
        depth += 1
        if depth > _GROUP_LIMIT:
            _fail()
        opened = self.pos
        self.pos += 1
        self.skip_space()
        saved = self.extended, self.insensitive
        saved_lenient = self.lenient_extended, self.lenient_insensitive
        capture = True
        look = behind = atomic = positive_ahead = False
        if self.peek() == "?":
            self.pos += 1
            c = self.peek()
            rest = self.text[self.pos : self.pos + 3]
            if c == ":":
                self.pos += 1
                capture = False
            elif c in ("=", "!") or rest[:2] in ("<=", "<!"):
                self.end_strict()
                behind = c == "<"
                positive_ahead = c == "="
                self.pos += 2 if behind else 1
                capture, look = False, True
            elif c == "<" or rest[:2] == "P<":
                self.pos += 1 if c == "<" else 2
                self.capture_name(">")
            elif c == "'":
                if self.strict:
                    _fail()
                self.pos += 1
                self.capture_name("'")
            elif c == ">":
                if self.strict:
                    _fail()
                self.pos += 1
                capture, atomic = False, True
            elif c == "#":
                _fail()  # a comment in the strict reading (the lenient one skips comments as white space)
            else:
                if self.flags():
                    return None  # (?flags): no group, the flags hold to the end of the enclosing one
                capture = False
        else:
            self.captures += 1
        number = self.captures  # the group's number, when it captures
        if behind:
            self.behind += 1
        around = self.in_behind
        if look:
            self.in_behind = behind
        self.open_groups += 1
        inner = self.alternation(depth)
        self.open_groups -= 1
        self.in_behind = around
        if behind:
            self.behind -= 1
        if self.peek() != ")":
            _fail()
        self.pos += 1
        if not (capture or look or atomic):
            self.lenient_extended, self.lenient_insensitive = saved_lenient
        lenient = self.lenient_extended, self.lenient_insensitive
        if self.strict and not self.lenient_flags:
            self.extended, self.insensitive = saved
            self.parted = self.parted or saved != lenient
        else:
            self.extended, self.insensitive = lenient
        nest = inner.nest + 1
        # Where the inside of the group lacks the groups a class's rest needs (see lenient_rest): written out alone
        # in a look-around or an atomic group, whole in a group a back-reference names.
        inside = unwritable = 0
        if inner.needs or inner.unwritable:
            inside = (_IN_EASY | _IN_HARD) * (
                _alone_unwritable(inner) if look or atomic else _unwritable(inner, hard=False)
            )
            unwritable = _IN_HARD * _unwritable(inner, hard=True)
        if look:  # its inside is in an easy context
            worst = _behind(inner) if behind else inner.easy
            return _Item(
                inner.cost + 16,
                repeatable=False,
                nest=nest,
                hard=True,
                least=0,
                easy=worst,
                tough=worst,
                kind="ahead" if positive_ahead else "",
                parts=(inner,),
                flawed=inner.flawed or (behind and not _behind_matchable(inner)),
                unwritable=inside,
            )
        if capture:
            if inner.fixed:
                self.lengths[number] = inner.least
            # A group a back-reference names is hard: the lenient engine runs it itself.
            hard = inner.hard or number in self.referenced
            # The group's own parentheses are one of the groups a class's rest in it may need, when the lenient
            # engine writes the group out whole (observed: "([]0-[b])(])" and "\\b([]0-[b])(])" are taken,
            # "([]0-[b])(])\\1" and "(a\\b[]0-[b])(])" are not).
            if hard:
                unwritable |= inside & _IN_EASY
            return _Item(
                inner.cost + 64,
                nest=nest,
                hard=hard,
                fixed=inner.fixed,
                least=inner.least,
                easy=inner.easy if hard else None,
                tough=inner.tough,
                flawed=inner.flawed,
                needs=0 if hard else max(inner.needs - 1, 0),
                unwritable=unwritable,
            )
        if atomic:  # hard, its inside in an easy context (and repeatable, even when empty)
            return inner.but(
                nest=nest,
                repeatable=True,
                hard=True,
                literal=False,
                tough=inner.easy,
                kind="",
                parts=(),
                needs=0,
                unwritable=inside,
            )
        # A group that captures nothing: the lenient reading sees through it, so it repeats as its item does (one
        # holding white space the strict reading skipped holds a character for the lenient one).
        return inner.but(nest=nest, repeatable=inner.repeatable or self.spaced > opened)

    def capture_name(self, close: str) -> None:
        end = self.text.find(close, self.pos)
        if end < 0:
            _fail()
        name = self.text[self.pos : end]
        if not name:
            _fail()
        if self.strict:
            first = name[0]
            if not (first == "_" or first.isalpha()) or not all(
                ch in "_.[]" or ch.isalnum() for ch in name[1:]
            ):
                _fail()
            if name in self.names:
                _fail()
        self.captures += 1
        self.names.setdefault(name, self.captures)
        self.pos = end + 1

    def flags(self) -> bool:
        """Flags after ``(?``: True for ``(?flags)``, False for ``(?flags:`` (the reader is past either)."""
        start = self.pos
        text, n = self.text, len(self.text)
        seen: set[str] = set()
        negated = False
        last = ""
        while True:
            if self.pos >= n:
                _fail()
            c = text[self.pos]
            if c in _LENIENT_SPACE and self.extended and not self.strict:
                # The lenient reading skips its white space among flags while x holds (observed: "(?=a)(?x)(? i)"
                # and "(?=a)(?x)(? )" are taken, "(?=a)(?x)(?-x )" is not).
                self.pos += 1
                continue
            if c in ":)":
                break
            if c == "-":
                if negated:
                    _fail()
                negated = True
            elif c in _STRICT_FLAGS:
                if c in seen and self.strict:
                    _fail()
                seen.add(c)
                if c == "x":
                    self.extended = self.lenient_extended = not negated
                elif c == "i":
                    self.insensitive = self.lenient_insensitive = not negated
            else:
                _fail()
            last = c
            self.pos += 1
        if self.pos == start or text[start : self.pos] == "-":
            _fail()
        if last == "-" and self.strict:
            _fail()
        self.pos += 1
        return c == ")"

    def escape(self) -> _Item:
        text = self.text
        self.pos += 1
        c = self.peek()
        if c is None:
            _fail()
        self.pos += 1
        if "0" <= c <= "9":
            self.end_strict()
            start = self.pos - 1
            while self.peek() is not None and "0" <= self.text[self.pos] <= "9":
                self.pos += 1
            # Leading zeros are taken, however many (observed: "(a)\\0000000000001" names group 1).
            number = _decimal(text[start : self.pos])
            return self.reference(1 << 40 if number is None else number)
        if c in "kg" and not self.strict and self.peek() in ("<", "'"):
            close = ">" if self.peek() == "<" else "'"
            if c == "g" and close != ">":
                _fail()
            end = text.find(close, self.pos + 1)
            if end < 0:
                _fail()
            name = text[self.pos + 1 : end]
            self.pos = end + 1
            if name.isdigit() and name.isascii():
                return self.reference(int(name[-12:]) if len(name) <= 12 else 1 << 40)
            if name in self.names:
                return self.reference(self.names[name])
            _fail()
        if c == "c":
            letter = self.peek()
            if self.strict and not self.lenient_flags:
                self.written[self.pos - 2] = c
            # The lenient reading knows no "\\c" but one the strict reading wrote out (see class_member).
            if not (self.strict or self.written.get(self.pos - 2) == c):
                _fail()
            if letter is None or not ("a" <= letter.lower() <= "z"):
                _fail()
            self.pos += 1
            return _Item(32, literal=True)
        if c in "xuU":
            return self.character(self.hex_value(c))
        if c in "pP":
            return _Item(self.property())
        if c in "bB" and self.peek() == "{" and not self.rest:
            # What the lenient reading skips in braces may come before a count's number and among a name's
            # characters (observed: "(?x)\\b{ 2}", "(?x)\\b{#c\n2}", "(?x)\\b{st#c\nart}" and
            # "(?=a)\\b{st(?#c)art}" are taken).
            k = self.lenient_gap(self.pos + 1)
            following = text[k] if 0 <= k < len(text) else None
            if following is not None and ("0" <= following <= "9" or (following == "," and not self.strict)):
                return _BOUNDARY  # a count of the boundary follows
            if c == "B":
                _fail()
            letters: list[str] = []
            while 0 <= k < len(text) and text[k] != "}":
                letters.append(text[k])
                k = self.lenient_gap(k + 1)
            if k < 0 or k >= len(text) or "".join(letters) not in _WORD_BOUNDARIES:
                _fail()
            self.pos = k + 1
            return _BOUNDARY
        if c.isascii() and c.isalpha():
            if self.strict:
                if c == "a":
                    self.bell = True
                elif c not in "bBAzdDsSwWfnrtv":
                    _fail()
            elif c not in _LENIENT_LETTERS:
                _fail()
            cost = self.perl_costs.get(c, 32)
            if self.insensitive and self.perl_costs is _PERL_COSTS and c in "wW":
                cost = _insensitive_word_cost(c)
            if c in "bBGKRZ":  # word boundaries, \G, \K, the end before a final newline, a line break: hard
                return _Item(
                    cost,
                    repeatable=c not in "GK",  # \G and \K take no quantifier, not even {1}
                    hard=True,
                    fixed=c != "R",
                    least=int(c == "R"),
                )
            if c in "Az":
                return _Item(cost, least=0)
            return _Item(cost, literal=c in "aefnrtv")
        if self.strict and (not c.isascii() or c.isalnum()):
            _fail()
        return _BOUNDARY if c in "<>" else _Item(32, literal=True)

    def reference(self, number: int) -> _Item:
        """A back-reference to group ``number``: it always matches as many characters as the group when that one
        is closed and of a fixed length."""
        if number == 0:
            _fail()
        if self.behind and number > self.captures:
            _fail()
        self.numbers.append(number)
        length = self.lengths.get(number)
        return _Item(64, hard=True, fixed=length is not None, least=length or 0)

    def hex_value(self, kind: str) -> int:
        text = self.text
        if self.peek() == "{":
            # What the lenient reading skips in braces may come among the digits, in a class too (observed:
            # "(?x)\\x{4#c\n1}" and "(?=a)[\\x{(?#c)41}]" are taken).
            found: list[str] = []
            k = self.lenient_gap(self.pos + 1)
            while 0 <= k < len(text) and text[k] != "}" and len(found) <= 8:
                found.append(text[k])
                k = self.lenient_gap(k + 1)
            digits = "".join(found)
            if k < 0 or k >= len(text) or text[k] != "}":
                _fail()
            self.pos = k + 1
            if not digits or len(digits) > 8 or not all(d in _HEX for d in digits):
                _fail()
        else:
            width = {"x": 2, "u": 4, "U": 8}[kind]
            digits = text[self.pos : self.pos + width]
            if len(digits) < width or not all(d in _HEX for d in digits):
                _fail()
            self.pos += width
        value = int(digits, 16)
        if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
            _fail()
        return value

    def property(self) -> int:
        text = self.text
        c = self.peek()
        if c is None:
            _fail()
        if c == "{":
            end = text.find("}", self.pos)
            if end < 0:
                _fail()
            body = text[self.pos + 1 : end]
            self.pos = end + 1
            if not body.strip():
                _fail()
            return _property_cost(body, insensitive=self.insensitive)
        self.pos += 1
        if c not in "CLMNPSZclmnpsz":
            _fail()
        return (_INSENSITIVE_PROPERTY_COSTS if self.insensitive else _PROPERTY_COSTS).get(c.lower(), 10000)

    # -- classes -----------------------------------------------------------------------------------------------

    def class_item(self, spans: list[tuple[int, int]], costs: list[int]) -> int | None:
        """One item of a class (not a ``[``): its code point, or None for a set (``\\d``, ``\\p{L}``), whose
        ranges go to ``spans`` or, for large sets, whose estimated cost goes to ``costs``."""
        c = self.text[self.pos]
        self.pos += 1
        if c != "\\":
            return ord(c)
        e = self.peek()
        if e is None:
            _fail()
        self.pos += 1
        if e in "xuU":
            return self.hex_value(e)
        if e in "pP":
            costs.append(self.property())
            return None
        if e == "c":
            letter = self.peek()
            if not self.strict or letter is None or not ("a" <= letter.lower() <= "z"):
                _fail()
            self.pos += 1
            return ord(letter) % 32
        if self.strict and "1" <= e <= "9":
            raise _BackInClass
        if e.isascii() and e.isalnum():
            if self.strict and e not in "dDsSwW" and e != "a" and e not in _SIMPLE_ESCAPES:
                _fail()
            if not self.strict and e not in _LENIENT_CLASS_LETTERS:
                _fail()
            if e in "dDsSwW":
                self.escapes.add(e)
                if self.perl_costs is _UNICODE_PERL_COSTS:
                    costs.append(_UNICODE_PERL_COSTS[e])
                    return None
                if e in "DSW":  # its complement's ranges, added when the class closes (class_cost)
                    return None
            if e in _CLASS_SPANS:
                spans.extend(_CLASS_SPANS[e])
                return None
            if e in "DSWhHkKRGAzB":
                costs.append(_PERL_COSTS.get(e, 1000))
                return None
            return 7 if e == "a" else _LENIENT_VALUES.get(e, ord(e))
        if self.strict and (not e.isascii() or e in "<>"):
            _fail()
        return ord(e)

    def char_class(self) -> _Item:
        """A class. In extended mode the strict reading skips white space and comments in it (around a range's
        hyphen too), while the lenient one takes them as characters (observed: ``(?=a)(?x)[z - a]`` is taken,
        ``(?x)[z - a]`` and ``(?x)[a- z]`` are not); while both go on, both must take it, each by its own rules
        (observed: ``(?x)[a#\\e\\n]`` is taken, ``(?x)[a#\\cA\\n]`` is not).

        The lenient engine is handed the pattern with what the strict reading read as a ``\\cX`` written out as
        that control character and, when the strict reading reads the pattern to the end, each class escape it
        read written out as a class (the ECMA meaning), ``[`` first: there a range may end in one, ending with a
        ``[`` and closing the class, and none starts a range (observed: ``(?x)[ -\\d]`` and ``(?x)[\\d- ]`` are
        taken, ``(?x)[ -\\d(]``, ``(?x)[a# -\\d\\na]`` and ``(?x)[ -\\d](?=a)`` are not). The second reading of a
        pattern the strict reading does not read to the end (see _read) reads the class escapes as they are."""
        start = self.pos
        try:
            return self.both_classes()
        except _BackInClass:
            # The strict reading stops at a back-reference in a class, the lenient one reads the class (observed:
            # "(?x)(a)[ ]\\1" is taken; "(a)[\\1]" is not: the lenient reading takes none in a class).
            self.pos = start
            if self.apart < 0:
                self.apart = start  # (where a second reading stops the strict reading too)
            self.end_strict()
            return self.class_read(skip=False)

    def both_classes(self) -> _Item:
        """A class read by the readings going on (:meth:`char_class`)."""
        # (A second reading with the lenient reading's flags is that reading's alone.)
        if not (self.extended and self.strict) or self.lenient_flags:
            if self.strict and self.pos == self.apart:
                self.end_strict()
            return self.class_read(skip=False)
        start = self.pos
        item = self.class_read(skip=True)
        end = self.pos
        self.pos, self.strict = start, False
        self.written_rest_cost = -1
        try:
            lenient = self.class_read(skip=False)
        finally:
            self.strict = True
        if self.written_rest_cost >= 0:
            # The lenient engine's class has a rest (see lenient_rest): its program holds both, and may need groups.
            item = item.but(
                cost=max(item.cost, self.written_rest_cost),
                needs=lenient.needs,
                unwritable=lenient.unwritable,
            )
        if self.pos != end and not self.parted:
            # The readings end the class apart (observed: "(?x)[a#](\n]" and "(?x)[\t] **]]" are not taken): from
            # here they read the text otherwise, as when their flags part.
            self.parted = True
            self.apart = start
        self.pos = end
        return item

    def class_read(self, *, skip: bool) -> _Item:
        """A class read with or without skipping white space and comments, with the classes nested in it (left
        unescaped after an ECMA empty class ``[]``) read on a stack of their own rather than by recursion: they may
        nest 250 deep.

        A range may end in a ``[``, the character (``[]0-[b]]`` is ``]``, ``0``-``[`` and ``b``, then a ``]``),
        while the lenient engine, to find where its class ends, counts a class opening there; it hands its class on
        as written, so what lies between the end read here and its own is a pattern there (:meth:`lenient_rest`)."""
        # Each open class: its spans, its costs, whether negated, the class escapes met in it.
        stack: list[tuple[list[tuple[int, int]], list[int], bool, set[str]]] = []
        deepest = 0
        first = True
        opening = self.pos
        farther = False  # the lenient engine's class may end after the one read here
        while True:
            if first:
                self.pos += 1  # the "["
                if skip:
                    self.skip_space(comments=False)  # (observed: "(?x)[ ^]" is a negated class, left open)
                negated = self.peek() == "^"
                if negated:
                    self.pos += 1
                stack.append(([], [], negated, set()))
                deepest = max(deepest, len(stack))
                if skip:
                    # Hyphens first in a class are characters, white space between them skipped (observed:
                    # "(?x)[- -!]" is taken); then a "]" closes the class.
                    self.skip_space(comments=False)
                    while self.peek() == "-":
                        self.pos += 1
                        stack[-1][0].append((0x2D, 0x2D))
                        self.skip_space(comments=False)
                        first = False
            spans, costs, negated, escapes = stack[-1]
            if skip:
                self.skip_space(comments=False)
            c = self.peek()
            if c is None:
                _fail()
            if c == "]" and not first:
                self.pos += 1
                stack.pop()
                every = any(e in escapes and e.upper() in escapes for e in "dsw")  # [\\s\\S]: any character
                cost = 964 if every else self.class_cost(spans, costs, negated=negated, escapes=escapes)
                if not stack:
                    needs = 0
                    if farther and not (skip or self.rest):  # (a rest is the strict reading's engine's alone)
                        cost, needs = self.lenient_rest(opening, cost)
                    # (the strict reading counts two levels per class)
                    return _Item(cost, nest=2 * deepest, needs=needs, unwritable=_IN_HARD * (needs > 0))
                stack[-1][1].append(cost)
                continue
            if first and c == "]":
                # A "]" first in a class (after an optional "^") is a character of its own: it starts no range
                # (observed: "[]-!]" is "]", "-" and "!").
                self.pos += 1
                spans.append((0x5D, 0x5D))
                first = False
                continue
            first = False
            if c in "-&~" and self.peek(1) == c:
                # A set operation ("--", "&&", "~~"): escaped in a class but after an ECMA empty class "[]", which
                # opens one here (observed: "[]--[]]]" and "[]~~--!]" are taken).
                self.pos += 2
                continue
            if c == "[":
                match = _ASCII_CLASS.match(self.text, self.pos)
                if match is not None and match.group(1) in _ASCII_CLASSES:
                    self.pos = match.end()
                    spans.append((0x20, 0x7E))
                else:
                    first = True  # a nested class opens
                continue  # a hyphen after either is a plain one: the next item
            self.escapes = escapes
            start, nested = self.class_member(spans, costs)
            if skip:
                self.skip_space(comments=False)
            following = _peek_space(self.text, self.pos + 1) if skip else self.peek(1)
            if self.peek() == "-" and following not in (None, "]", "-") and not nested:
                self.pos += 1
                if skip:
                    self.skip_space(comments=False)
                if self.peek() is None:
                    _fail()
                closes = False
                if self.peek() == "[":
                    self.pos += 1
                    end: int | None = 0x5B
                    farther = True
                else:
                    end, closes = self.class_member([], [])
                    if closes:  # a class written out: its "[" ends the range, the rest of it closes the class
                        end = 0x5B
                        farther = True
                if start is None or end is None or end < start:
                    _fail()
                spans.append((start, end))
                if closes:
                    # The written out class's "[" ended the range; what follows it in the class, the escape's
                    # characters (a "^" first for a complement), are the class's too (observed:
                    # "(?x)[ -\\w{119153}]" is taken, "(?x)[ -\\w{119154}]" is not).
                    letter = self.text[self.pos - 1]
                    written = [*_CLASS_SPANS[letter.lower()], *([(0x5E, 0x5E)] if letter.isupper() else [])]
                    cost = self.class_cost(_merged([*spans, *written]), costs, negated=negated, escapes=set())
                    stack.pop()
                    if not stack:
                        cost, needs = self.lenient_rest(opening, cost, written_out=True)
                        self.written_rest_cost = cost
                        return _Item(cost, needs=needs, unwritable=_IN_HARD * (needs > 0))
            elif start is not None:
                spans.append((start, start))

    def class_member(self, spans: list[tuple[int, int]], costs: list[int]) -> tuple[int | None, bool]:
        """An item of a class (:meth:`class_item`), and whether it is a class escape written out as a class. The
        strict reading notes where it reads a ``\\c`` or a class escape (:attr:`written`); the lenient one alone
        takes those written out (see :meth:`char_class`; a ``\\cX`` as its control character)."""
        letter = self.peek(1) if self.peek() == "\\" else None
        if letter in _WRITTEN_OUT:
            if self.strict and not self.lenient_flags:
                self.written[self.pos] = letter
            elif self.pos in self.written and (letter == "c" or self.perl_costs is _PERL_COSTS):
                self.pos += 3 if letter == "c" else 2
                return (ord(self.text[self.pos - 1]) % 32, False) if letter == "c" else (None, True)
        return self.class_item(spans, costs), False

    def lenient_rest(self, opening: int, cost: int, *, written_out: bool = False) -> tuple[int, int]:
        """Read what lies between the end of the class opening at ``opening`` read here (whose estimated size is
        ``cost``) and the end the lenient engine finds (:func:`_lenient_class_end`); the estimated size of both,
        and how many groups around the class the rest needs (:attr:`_Item.needs`). It is a pattern for the engine
        that engine hands its class on to, the strict reading's: after the class, so a quantifier there repeats
        the class, without x flag (observed: ``[]0-[b]**]`` is taken, ``[]0-[b](]`` and ``([]0-[b])]`` are not;
        ``[]0-[b]{119153}]`` is taken, ``[]0-[b]{119154}]`` is not, as for as many copies of the class). What it
        costs goes with the class: repeated, the lenient engine repeats both (``[]0-[b]]{87379}`` and
        ``[]0-[b]x]{68983}`` are taken, with one more copy they are not).

        That engine reads it in the text of the program the class lands in, as the lenient engine writes it out:
        it may close groups opened there before the class, then open as many, which those groups' own ``)`` close
        (observed: ``([]0-[b])(])`` and ``(?x)([ -\\d)(])`` are taken, ``(?:[]0-[b])(])`` is not: the lenient engine
        writes no group that captures nothing as such). Under the i flag it writes the class in a group of its own,
        ``(?i:…)`` (``(?i)(?:[]0-[b])(])`` is taken). ``written_out``: the class ends in a class escape written out
        as a class, which the strict reading read as such (its class holds the rest)."""
        end = _lenient_class_end(self.text, opening)
        if end < 0:
            _fail()
        start, self.pos = self.pos, end
        if end == start + 1:
            return cost + 32, 0  # a "]" alone
        text = self.text[start:end]
        closed = _groups_closed(text)
        if self.strict and not written_out and closed > self.open_groups:
            # To the strict reading, which ends the class before, the rest's ")" close groups around it too, of any
            # kind (observed: "(?i)[]0-[b])(]" is not taken).
            _fail()
        rest = _Reader("(" * closed + "0" + text + ")" * closed, rest=True, placeholder=(closed, cost))
        try:
            size = rest.read()
        except _Parted:
            _fail()  # a look-around or a back-reference, which that engine does not know
        if not rest.strict:
            _fail()
        return size, max(closed - self.lenient_insensitive, 0)

    def class_cost(
        self, spans: list[tuple[int, int]], costs: list[int], *, negated: bool, escapes: set[str]
    ) -> int:
        """The estimated program size of a class (per copy): measured shapes for ASCII sets, a trie of UTF-8
        sequences for others (complements included), the largest set for a class that holds properties."""
        if self.perl_costs is _UNICODE_PERL_COSTS:
            if negated and not spans and len(costs) == 1 and len(escapes) == 1:
                # [^\\d] is \\D, [^\\W] is \\w, ...: the other escape's cost
                return _UNICODE_PERL_COSTS[escapes.pop().swapcase()]
        else:
            # The ECMA class escapes \\D, \\S, \\W: what their small sets leave.
            for e in escapes & {"D", "S", "W"}:
                spans = spans + _complement(self.folded(_merged(_CLASS_SPANS[e.lower()])))
        # Under the i flag the class holds every case of its characters (before a negation takes effect).
        found = self.folded(_merged(spans))
        if costs:  # properties, nested classes, Unicode's class escapes: rough
            if not found:
                base = 0
            elif negated:
                base = 1000 + 36 * (len(found) - 1)
            else:
                base = _set_cost(found)
            return _with_costs(base, costs)
        return _set_cost(_complement(found) if negated else found)

    def folded(self, found: list[tuple[int, int]]) -> list[tuple[int, int]]:
        return _folded(found) if self.insensitive else found


#: A class escape the lenient engine reads as Unicode's (a backslash before it: not necessarily an escape).
_PERL_ESCAPE = re.compile(r"\\[dDsSwW]")


def _decimal(digits: str) -> int | None:
    """The value of ASCII decimal ``digits``, or None when it has more than 20 significant digits (leading zeros
    are dropped before ``int`` reads them: it refuses a string of more than 4,300 digits, zeros too)."""
    significant = digits.lstrip("0")
    return None if len(significant) > 20 else int(significant or "0")


def _decimal_less(left: str, right: str) -> bool:
    """Whether the number of ASCII decimal digits ``left`` is less than that of ``right``, however long."""
    left, right = left.lstrip("0"), right.lstrip("0")
    return (len(left), left) < (len(right), right)


def _beyond_64_bits(digits: str) -> bool:
    """Whether a count's decimal digits are a number above ``2**64 - 1`` (without converting a long one)."""
    significant = digits.lstrip("0")
    return len(significant) > 20 or (len(significant) == 20 and significant > "18446744073709551615")


def regex_ok(pattern: str) -> bool:
    """Whether the reference accepts ``pattern`` as a regular expression."""
    text = _ecma_classes(pattern)
    try:
        try:
            reader, size = _read(text, lenient_flags=False)
            parted, easy = reader.parted or reader.spaced >= 0, reader.strict
        except _Parted as stop:
            reader = stop.args[0]
            parted, easy, size = True, False, 0
        if parted:
            # A flag group alone left a capturing group while the strict reading went on (the lenient reading's
            # flags differ from there on), the readings ended a class apart, or the strict reading skipped white
            # space the lenient one takes as a character: the lenient reading reads part of the text otherwise. A
            # reading with its flags from the start must succeed too, by its rules alone from where the classes'
            # ends parted; when the lenient engine runs the pattern, its programs are the ones
            # counted.
            written = reader.written
            if not easy:  # (the class escapes are not written out)
                written = {at: letter for at, letter in written.items() if letter == "c"}
            again, again_size = _read(
                text, lenient_flags=True, written=written, apart=reader.apart, easy=easy
            )
            if not (easy and again.strict):
                size = again_size
    except _Invalid:
        return False
    return size <= _SIZE_LIMIT


def _read(
    text: str,
    *,
    lenient_flags: bool,
    written: dict[int, str] | None = None,
    apart: int = -1,
    easy: bool = False,
) -> tuple[_Reader, int]:
    """A reading of ``text`` (:class:`_Invalid` when a rule says no): the reader, the estimated size of the largest
    program. ``written``, ``apart`` and ``easy`` (whether the strict reading reads the pattern to the end): what a
    first reading found, for a second one."""
    reader = _Reader(text, lenient_flags=lenient_flags, written=written, apart=apart)
    size = reader.read()
    unicode = not (reader.strict or easy) and _PERL_ESCAPE.search(text) is not None
    if unicode or reader.numbers:
        # Read again when only the lenient reading reached the end (its programs are the ones whose size counts,
        # and there the class escapes are Unicode's), or when back-references name groups: a reference may follow
        # its group, so only a second reading knows the group is hard when it reads it (which never makes a
        # program larger, but may leave a look-behind of varying length unmatchable).
        again = _Reader(
            text,
            unicode=unicode,
            referenced=frozenset(reader.numbers),
            lenient_flags=lenient_flags,
            written=written,
            apart=apart,
        )
        size = again.read()
    return reader, size


# -- the ECMA-262 reading of drafts 4, 6 and 7 -------------------------------------------------------------------

_ECMA_QUANTIFIER = re.compile(r"\{([0-9]+)(?:(,)([0-9]*))?\}")
_ECMA_PROPERTY = re.compile(r"\{[A-Za-z0-9_]+(?:=[A-Za-z0-9_]+)?\}")
_ECMA_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_ECMA_HEX2 = re.compile(r"[0-9A-Fa-f]{2}")
_ECMA_MODIFIERS = re.compile(r"\?([ims]*)(?:(-)([ims]*))?:")
_ECMA_BRACED = re.compile(r"\{([0-9A-Fa-f]+)\}")
_ATOM, _ASSERTION, _NOTHING = 0, 1, 2
#: The most work :func:`ecma_regex_ok` spends on group names given more than once: their number times the depth of
#: the groups (a pattern over it is refused; docs/limits.md).
ECMA_NAMES_WORK = 4_000_000


def _ecma_name_ok(name: str) -> bool:
    """A group name: an identifier (``$`` and ``_`` among its characters)."""
    if not name:
        return False
    plain = name.replace("$", "_")
    return plain.isidentifier()


#: Where a pattern's groups and alternatives are: ``(``, ``)`` and ``|`` outside classes, not escaped (a class
#: ends at the first ``]`` not escaped: ECMA-262's classes do not nest).
_ECMA_STRUCTURE = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]?|([()|])", re.DOTALL)


def _ecma_structure(pattern: str) -> Iterator[tuple[int, str]]:
    """Each ``(``, ``)`` and ``|`` of ``pattern`` that opens or closes a group or parts alternatives: (where, which)."""
    for found in _ECMA_STRUCTURE.finditer(pattern):
        if found.group(1) is not None:
            yield found.start(), found.group(1)


def _ecma_groups(pattern: str) -> tuple[int, set[str]] | None:
    """The capture groups of ``pattern``: their number and their names; None for a name that is no identifier,
    or one given again where both groups might take part in a match (not in different alternatives). Escapes and
    classes are skipped; the pattern is read again, fully, after this."""
    found: list[tuple[int, str]] = []  # (where, name) of each named group
    count = depth = deepest = 0
    for i, c in _ecma_structure(pattern):
        if c == ")":
            depth = max(0, depth - 1)
        elif c == "(":
            depth += 1
            deepest = max(deepest, depth)
            if not pattern.startswith("?", i + 1):
                count += 1
            elif pattern.startswith("?<", i + 1) and not pattern.startswith(("?<=", "?<!"), i + 1):
                end = pattern.find(">", i + 3)
                name = pattern[i + 3 : end] if end >= 0 else ""
                if not _ecma_name_ok(name):
                    return None
                found.append((i, name))
                count += 1
    repeated = {name for name, times in Counter(name for _, name in found).items() if times > 1}
    if repeated:
        starts = {where for where, name in found if name in repeated}
        # Checking where repeated names stand costs their number times the depth of the groups: bounded.
        if len(starts) * deepest > ECMA_NAMES_WORK or not _names_apart(pattern, starts):
            return None
    return count, {name for _, name in found}


def _names_apart(pattern: str, starts: set[int]) -> bool:
    """Whether the named groups opening at ``starts`` (names given more than once) never repeat a name where both
    might take part in a match: a name may come again only in another alternative of a group (or of the pattern)
    than the one holding its earlier use."""
    # Per open group (the pattern itself first): the names of its current alternative (nested ones included once
    # their group closed) and of its earlier alternatives; ``live`` counts the names a new one may not repeat.
    levels: list[tuple[list[str], list[str]]] = [([], [])]
    live: dict[str, int] = {}
    for i, c in _ecma_structure(pattern):
        if c == "|":
            current, earlier = levels[-1]
            for name in current:
                live[name] -= 1
            earlier.extend(current)
            current.clear()
        elif c == ")" and len(levels) > 1:
            current, earlier = levels.pop()
            for name in earlier:
                live[name] += 1
            levels[-1][0].extend(current)
            levels[-1][0].extend(earlier)
        elif c == "(":
            if i in starts:
                name = pattern[i + 3 : pattern.find(">", i + 3)]
                if live.get(name, 0):
                    return False
                live[name] = live.get(name, 0) + 1
                levels[-1][0].append(name)
            levels.append(([], []))
    return True


class _EcmaReader:
    """One pass over a pattern in the syntax of ECMA-262 with the ``u`` flag (what drafts 4, 6 and 7 check the
    ``regex`` format of every pattern with): groups are kept on a list, so any depth is read without recursion."""

    def __init__(self, text: str, groups: int, names: set[str]) -> None:
        self.text = text
        self.pos = 0
        self.groups = groups
        self.names = names

    def read(self) -> None:
        text, n = self.text, len(self.text)
        open_groups: list[bool] = []  # per open group: whether it is a look-around (an assertion)
        last = _NOTHING
        while self.pos < n:
            c = text[self.pos]
            if c == "|":
                self.pos += 1
                last = _NOTHING
            elif c == "(":
                open_groups.append(self.group_opener())
                last = _NOTHING
            elif c == ")":
                if not open_groups:
                    _fail()
                self.pos += 1
                last = _ASSERTION if open_groups.pop() else _ATOM
            elif c in "*+?":
                if last != _ATOM:
                    _fail()
                self.pos += 1
                self.lazy()
                last = _NOTHING
            elif c == "{":
                found = _ECMA_QUANTIFIER.match(text, self.pos)
                if found is None or last != _ATOM:
                    _fail()
                low, comma, high = found.groups()
                if comma and high and _decimal_less(high, low):
                    _fail()
                self.pos = found.end()
                self.lazy()
                last = _NOTHING
            elif c in "}]":
                _fail()
            elif c in "^$":
                self.pos += 1
                last = _ASSERTION
            elif c == "[":
                self.char_class()
                last = _ATOM
            elif c == "\\":
                last = self.atom_escape()
            else:
                self.pos += 1
                last = _ATOM
        if open_groups:
            _fail()

    def lazy(self) -> None:
        if self.text.startswith("?", self.pos):
            self.pos += 1

    def group_opener(self) -> bool:
        """Read ``(`` and what opens the group; whether it is a look-around."""
        text = self.text
        self.pos += 1
        if not text.startswith("?", self.pos):
            return False
        for opener in ("=", "!", "<=", "<!"):
            if text.startswith(opener, self.pos + 1):
                self.pos += 1 + len(opener)
                return True
        modifiers = _ECMA_MODIFIERS.match(text, self.pos)
        if modifiers is not None:  # (?:, or flags i, m, s to add and to remove, each once
            add, dash, remove = modifiers.groups()
            flags = add + (remove or "")
            if len(set(flags)) != len(flags) or (dash and not flags):
                _fail()
            self.pos = modifiers.end()
            return False
        if text.startswith("<", self.pos + 1):
            end = text.find(">", self.pos + 2)
            if end < 0:
                _fail()
            self.pos = end + 1  # the name was checked with the others (_ecma_groups)
            return False
        _fail()

    def atom_escape(self) -> int:
        """``\\`` and what follows it outside a class: an assertion (``\\b``, ``\\B``) or an atom."""
        text = self.text
        e = text[self.pos + 1] if self.pos + 1 < len(text) else None
        if e is None:
            _fail()
        if e in "bB":
            self.pos += 2
            return _ASSERTION
        if "1" <= e <= "9":
            end = self.pos + 1
            while end < len(text) and "0" <= text[end] <= "9":
                end += 1
            number = _decimal(text[self.pos + 1 : end])
            if number is None or number > self.groups:
                _fail()
            self.pos = end
            return _ATOM
        if e == "k":
            if not text.startswith("<", self.pos + 2):
                _fail()
            end = text.find(">", self.pos + 3)
            if end < 0 or text[self.pos + 3 : end] not in self.names:
                _fail()
            self.pos = end + 1
            return _ATOM
        self.pos += 1
        self.escape_body(in_class=False)
        return _ATOM

    def escape_body(self, *, in_class: bool) -> int | None:
        """What follows a ``\\`` (the reader is on it): its code point, or None for a set (``\\d``, ``\\p{…}``)."""
        text = self.text
        e = text[self.pos]
        self.pos += 1
        if e in "dDsSwW":
            return None
        if e in "pP":
            found = _ECMA_PROPERTY.match(text, self.pos)
            if found is None:
                _fail()
            self.pos = found.end()
            return None
        if e in "fnrtv":
            return {"f": 12, "n": 10, "r": 13, "t": 9, "v": 11}[e]
        if e == "c":
            letter = text[self.pos] if self.pos < len(text) else ""
            if not ("a" <= letter.lower() <= "z" and letter.isascii()):
                _fail()
            self.pos += 1
            return ord(letter) % 32
        if e == "0":
            if self.pos < len(text) and "0" <= text[self.pos] <= "9":
                _fail()
            return 0
        if e == "x":
            found = _ECMA_HEX2.match(text, self.pos)
            if found is None:
                _fail()
            self.pos = found.end()
            return int(found.group(), 16)
        if e == "u":
            braced = _ECMA_BRACED.match(text, self.pos)
            if braced is not None:
                value = int(braced.group(1)[-8:], 16) if len(braced.group(1).lstrip("0")) <= 6 else 1 << 24
                if value > 0x10FFFF:
                    _fail()
                self.pos = braced.end()
                return value
            found = _ECMA_HEX4.match(text, self.pos)
            if found is None:
                _fail()
            self.pos = found.end()
            value = int(found.group(), 16)
            if 0xD800 <= value <= 0xDBFF and text.startswith("\\u", self.pos):
                trail = _ECMA_HEX4.match(text, self.pos + 2)
                if trail is not None and 0xDC00 <= int(trail.group(), 16) <= 0xDFFF:
                    # A surrogate pair written as two escapes is the one character they encode.
                    self.pos = trail.end()
                    return 0x10000 + ((value - 0xD800) << 10) + (int(trail.group(), 16) - 0xDC00)
            return value
        if in_class and e == "b":
            return 8
        if e.isascii() and not e.isalnum():
            return ord(e)  # a character escaped as itself
        _fail()

    def char_class(self) -> None:
        text, n = self.text, len(self.text)
        self.pos += 1
        if text.startswith("^", self.pos):
            self.pos += 1
        while True:
            if self.pos >= n:
                _fail()
            if text[self.pos] == "]":
                self.pos += 1
                return
            start = self.class_atom()
            if text.startswith("-", self.pos) and self.pos + 1 < n and text[self.pos + 1] != "]":
                self.pos += 1
                end = self.class_atom()
                if start is None or end is None or end < start:
                    _fail()

    def class_atom(self) -> int | None:
        text = self.text
        c = text[self.pos]
        if c != "\\":
            self.pos += 1
            return ord(c)
        if self.pos + 1 >= len(text):
            _fail()
        self.pos += 1
        if "1" <= text[self.pos] <= "9" or text[self.pos] in "kB":
            _fail()
        if text[self.pos] == "-":
            self.pos += 1
            return ord("-")
        return self.escape_body(in_class=True)


def ecma_regex_ok(pattern: str) -> bool:
    """Whether ``pattern`` is a regular expression in the syntax of ECMA-262 with the ``u`` flag, as the
    reference reads it for the ``regex`` format of drafts 4, 6 and 7 (observed: Unicode property names and the
    size of the program are not looked at there)."""
    groups = _ecma_groups(pattern)
    if groups is None:
        return False
    try:
        _EcmaReader(pattern, *groups).read()
    except _Invalid:
        return False
    return True
