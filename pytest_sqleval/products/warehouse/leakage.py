"""Does a semantic layer leak the eval questions?

A layer is a contract about the schema, written for analysts who have never seen the
eval set. The classic leak is not pasting gold SQL but encoding question-specific fixes
as "documentation", which shows up as the questions' own wording inside the layer.

Both measures work on lower-cased word tokens (``[a-z0-9]+``) and on word 3-grams, and
both ignore 3-grams that also occur in the *background*: the warehouse's own table and
column names and comments. Restating what the schema already tells every analyst is not
leakage, even when a question quotes the same comment.

- **containment**: for each question, the share of its 3-grams that occur in the
  layer's text and not in the background. The layer's score is the largest share over
  all questions; the check fails above ``THRESHOLD``.
- **near-verbatim sentences**: the same share for each question sentence of at least
  ``MIN_SENTENCE_WORDS`` words; a sentence at or above ``SENTENCE_LIMIT`` was copied
  (or lightly edited) into the layer, even when the rest of its question was not.

docs/explanation/vantage.md records the measured values that justify both numbers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

N = 3
THRESHOLD = 0.25
SENTENCE_LIMIT = 0.5
MIN_SENTENCE_WORDS = 8
_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.?!;])\s+")

Gram = tuple[str, ...]


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def ngrams(tokens: list[str], n: int = N) -> set[Gram]:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


@dataclass
class QuestionOverlap:
    case_id: str
    containment: float  # share of the question's n-grams found in the layer and not in the background
    shared: list[str]  # those n-grams, as text, in question order
    sentence_containment: float  # the same share for its most-copied sentence
    sentence: str


@dataclass
class LeakageReport:
    """The overlap of a layer with a suite's questions, and the verdict."""

    threshold: float
    sentence_limit: float
    n: int
    questions: list[QuestionOverlap] = field(default_factory=list)

    @property
    def score(self) -> float:
        return max((q.containment for q in self.questions), default=0.0)

    @property
    def sentence_score(self) -> float:
        return max((q.sentence_containment for q in self.questions), default=0.0)

    @property
    def mean(self) -> float:
        return sum(q.containment for q in self.questions) / len(self.questions) if self.questions else 0.0

    @property
    def worst(self) -> QuestionOverlap | None:
        return max(self.questions, key=lambda q: q.containment, default=None)

    @property
    def worst_sentence(self) -> QuestionOverlap | None:
        return max(self.questions, key=lambda q: q.sentence_containment, default=None)

    def problems(self, layer_path: str) -> list[str]:
        """One line per leaking question."""
        out = []
        for q in sorted(self.questions, key=lambda q: q.case_id):
            sample = "; ".join(f"'{s}'" for s in q.shared[:4])
            if q.containment > self.threshold:
                out.append(f"{layer_path}: leaks question {q.case_id}: {q.containment:.2f} of its word {self.n}-grams "
                           f"appear in the layer but not in the schema (threshold {self.threshold:.2f}), e.g. {sample}")
            elif q.sentence_containment >= self.sentence_limit:
                out.append(f"{layer_path}: leaks question {q.case_id}: its sentence '{q.sentence}' is near-verbatim in "
                           f"the layer ({q.sentence_containment:.2f} of its {self.n}-grams; limit "
                           f"{self.sentence_limit:.2f})")
        return out

    def summary(self) -> str:
        w, s = self.worst, self.worst_sentence
        if w is None or s is None:
            return "layer leakage: no questions to compare"
        return (f"layer leakage: max question {self.n}-gram containment {self.score:.3f} ({w.case_id}; fails above "
                f"{self.threshold:.2f}), mean {self.mean:.3f}; max sentence containment {self.sentence_score:.3f} "
                f"({s.case_id}; fails at {self.sentence_limit:.2f})")


def measure(layer_texts: Iterable[tuple[str, str]], questions: Iterable[tuple[str, str]], *,
            background: Iterable[str] = (), threshold: float = THRESHOLD, sentence_limit: float = SENTENCE_LIMIT,
            n: int = N) -> LeakageReport:
    """Overlap of ``layer_texts`` ((where, text) pairs) with ``questions`` ((case id, text)
    pairs), not counting n-grams that occur in ``background`` (the schema's own words)."""
    layer: set[Gram] = set()
    for _, text in layer_texts:
        layer |= ngrams(words(text), n)
    known: set[Gram] = set()
    for text in background:
        known |= ngrams(words(text), n)
    novel = layer - known
    report = LeakageReport(threshold=threshold, sentence_limit=sentence_limit, n=n)
    for case_id, question in questions:
        toks = words(question)
        grams = ngrams(toks, n)
        hits = grams & novel
        order = {g: i for i, g in reversed(list(enumerate(zip(*(toks[k:] for k in range(n))))))}
        best_sentence, best_share = "", 0.0
        for sentence in _SENTENCE.split(question.strip()):
            s_toks = words(sentence)
            s_grams = ngrams(s_toks, n)
            if len(s_toks) < MIN_SENTENCE_WORDS or not s_grams:
                continue
            share = len(s_grams & novel) / len(s_grams)
            if share > best_share:
                best_sentence, best_share = sentence.strip(), share
        report.questions.append(QuestionOverlap(
            case_id, round(len(hits) / len(grams), 4) if grams else 0.0,
            [" ".join(g) for g in sorted(hits, key=lambda g: order.get(g, 0))],
            round(best_share, 4), best_sentence))
    return report
