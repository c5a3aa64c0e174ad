"""Training speed of the language models with a large vocabulary, in one run: the primer's Brown models and
the matrix-embedding chapter's URN language model.

    .venv/bin/python benchmarks/lm_speed.py            # every model (a few minutes on 2 cores)
    .venv/bin/python benchmarks/lm_speed.py --quick    # two models, small vocabulary, 2 rounds, no files

One training step (forward, loss, backward, Adam) per batch at the primer's paper configuration
(``notebooks/params/primer.paper.yaml``: ``lm_batch_size`` rows of ``warmup`` + ``window`` tokens, the
vocabulary of Brown with words seen at least 4 times) for each of its neural language models, and at the
matrix-embedding chapter's (``notebooks/params/matrix_embeddings.paper.yaml``: its first batch of training
sentences, as they are padded and scored, and its vocabulary) for the URN language model. Compared,
interleaved over rounds (medians):

* ``urnlib`` - as the chapters train them: :func:`urnlib.losses.lm_loss` (the output layer only at the
  scored positions: the 64 after a primer row's warm-up, a sentence's words but not its padding; one fused
  cross-entropy node) and, for Bengio's NNLM, ``W x + U tanh(d + H x)`` as one product;
* ``before`` - the loop's default loss, ``F.cross_entropy`` over every position with the unscored ones
  ignored, and the NNLM's two products and their sum;
* ``floor (b)`` - the output layer's three products at the scored rows (forward, and the gradients of its
  input and weight), timed as ``torch.mm`` at those shapes; floor (a) is their flops at the measured GEMM
  peak.

The process keeps freed memory as training does (:mod:`urnlib.allocator`).
Target: ``urnlib <= 3 x floor (b)``. Writes ``book/performance/lm_speed.md`` and
``benchmarks/results/lm_speed.json``.
"""

from __future__ import annotations

from pathlib import Path

import torch

from recurrent_speed import _table, gemm_peak_flops, interleaved, machine, timing_arguments, write_report
from urnlib import losses
from urnlib.allocator import keep_freed_memory
from urnlib.models.nnlm import BengioNNLM
from urnlib.train import token_cross_entropy

JSON = Path(__file__).resolve().parent / "results" / "lm_speed.json"
BOOK_TABLE = Path(__file__).resolve().parents[1] / "book" / "performance" / "lm_speed.md"
TARGET = 3.0


class TwoProductNNLM(BengioNNLM):
    """The NNLM as it was computed before: ``b + W x + U tanh(d + H x)`` with two products and their sum."""

    def forward(self, tokens):
        x = self.features(tokens)
        y = self.bias.expand(*x.shape[:-1], self.vocab_size)
        if self.direct is not None:
            y = y + self.direct(x)
        if self.hidden_layer is not None:
            y = y + self.readout(torch.tanh(self.hidden_layer(x)))
        return y

    readout_parts = None  # the loss goes through forward


def vocabulary_size(quick: bool) -> int:
    if quick:
        return 2000
    from urnlib.chapters.primer import experiment as primer
    from urnlib.chapters.primer import lm as primer_lm

    return len(primer_lm.make_data(primer.Config.paper().brown_task()).vocab.tokens)


def models(quick: bool) -> list[str]:
    from urnlib.chapters.primer import experiment as primer

    texts = primer.Config.paper().lm_models
    return texts[:1] + texts[-1:] if quick else texts


def build(text: str, V: int, before: bool) -> torch.nn.Module:
    from urnlib.chapters.primer import lm as primer_lm

    spec = primer_lm.lm_spec(text)
    model = primer_lm.build(spec, V, V - 1)
    if before and spec["kind"] == "nnlm":
        old = TwoProductNNLM(V, spec["n"], spec["m"], spec["h"], direct=spec["direct"], start_id=V - 1)
        old.load_state_dict(model.state_dict())
        model = old
    return model


def urn_case(quick: bool):
    """``(name, build, x, y, V)``: the matrix chapter's URN language model (paper preset) and its first
    training batch (``--quick``: random sentences over 2,000 words)."""
    from urnlib.chapters.matrix_embeddings import experiment as matrix_embeddings
    from urnlib.chapters.matrix_embeddings import urn_lm
    from urnlib.models import build_model

    config = matrix_embeddings.Config.paper()
    spec = next(s for s in config.plan() if s.params["model"].get("kind") == "urn")
    B = spec.params["train"]["batch_size"]
    if quick:
        V, lengths = 2001, torch.randint(5, 30, (B, 1))
        x = torch.randint(0, V - 1, (B, 30))
        y = torch.where(torch.arange(30) < lengths, torch.randint(0, V - 1, (B, 30)), -100)
    else:
        d = matrix_embeddings.make_data(matrix_embeddings.LMTask(**spec.params["task"]))
        V = len(d.vocab.tokens) + 1  # and the start symbol
        data = urn_lm.lm_data(d.train, V - 1)
        x, y = data.inputs[:B], data.targets[:B]
    name = spec.name.split(" seed")[0]
    return name, (lambda: build_model(spec.params["model"], V)), x, y, V


def step_of(model, x, y, loss):
    opt = torch.optim.Adam(model.parameters(), 1e-3)

    def step():
        opt.zero_grad()
        value, _ = loss(model, x, y)
        value.backward()
        opt.step()

    return step


def floor_of(rows: int, width: int, V: int):
    """The output layer's forward product and its two gradient products at the scored rows."""
    f, w, g = torch.randn(rows, width), torch.randn(V, width), torch.randn(rows, V)
    out_fwd, out_df, out_dw = torch.empty(rows, V), torch.empty(rows, width), torch.empty(V, width)

    def run():
        torch.mm(f, w.T, out=out_fwd)
        torch.mm(g, w, out=out_df)
        torch.mm(g.T, f, out=out_dw)

    return run, 6.0 * rows * width * V


def primer_batch(V: int):
    """The primer's batch at its paper configuration: ``lm_batch_size`` rows of ``warmup`` tokens (read, not
    scored) and ``window`` predicted tokens."""
    from urnlib.chapters.primer import experiment as primer

    config = primer.Config.paper()
    B, warmup, window = config.lm_batch_size, config.warmup, config.window
    torch.manual_seed(0)
    x = torch.randint(0, V - 1, (B, warmup + window))
    y = torch.randint(0, V - 1, (B, warmup + window))
    y[:, :warmup] = -100
    return x, y


def measure(name, new, old, x, y, V, peak, args, rounds) -> dict:
    """One row of the table: the step as urnlib takes it, as before, and floor (b), interleaved."""
    scored = int((y != -100).sum())
    width = new.readout_parts(x[:1])[0].shape[-1]
    floor, flops = floor_of(scored, width, V)
    fns = {"urnlib": step_of(new, x, y, losses.lm_loss),
           "before": step_of(old, x, y, token_cross_entropy), "floor (b)": floor}
    t = interleaved(fns, rounds, args.reps)
    ratio = t["urnlib"] / t["floor (b)"]
    row = {"model": name, "V x width": f"{V} x {width}",
           "batch": f"{x.shape[0]} x {x.shape[1]} ({scored:,} scored)", "urnlib (s)": t["urnlib"],
           "before (s)": t["before"], "floor (b) (s)": t["floor (b)"], "floor (a) (s)": flops / peak,
           "urnlib / before": t["urnlib"] / t["before"], "urnlib / floor (b)": ratio,
           "target met": "yes" if ratio <= TARGET else "no"}
    print(row, flush=True)
    return row


def main() -> None:
    args = timing_arguments(__doc__, rounds=5, reps=2).parse_args()
    torch.set_num_threads(args.threads)
    keep_freed_memory()  # as urnlib.train.fit sets the allocator for training (urnlib.allocator)
    rounds = 2 if args.quick else args.rounds
    V = vocabulary_size(args.quick)
    x, y = primer_batch(V)
    peak = gemm_peak_flops()
    rows = [measure(text, build(text, V, False), build(text, V, True), x, y, V, peak, args, rounds)
            for text in models(args.quick)]
    name, build_urn, x, y, V = urn_case(args.quick)
    torch.manual_seed(0)
    new = build_urn()
    old = build_urn()
    old.load_state_dict(new.state_dict())
    rows.append(measure(name, new, old, x, y, V, peak, args, rounds))
    report = {"machine": machine(), "gemm_peak_gflops": peak / 1e9, "rows": rows}
    write_report(to_markdown(report), report, JSON, BOOK_TABLE, args.quick)


def to_markdown(report: dict) -> str:
    m = report["machine"]
    head = (f"*Measured {m['date']} on {m['cpu']}, {m['threads']} threads, torch {m['torch']}; GEMM peak "
            f"{report['gemm_peak_gflops']:.0f} GFLOP/s. One training step at each model's batch (rows x "
            "tokens); seconds per step, medians of interleaved rounds.*\n\n")
    cols = ["model", "V x width", "batch", "urnlib (s)", "before (s)", "floor (b) (s)",
            "floor (a) (s)", "urnlib / before", "urnlib / floor (b)", "target met"]
    return head + _table(report["rows"], cols) + "\n"


if __name__ == "__main__":
    main()
