"""Training speed of the language models with a large vocabulary (the primer's Brown models), in one run.

    .venv/bin/python benchmarks/lm_speed.py            # every model (a few minutes on 2 cores)
    .venv/bin/python benchmarks/lm_speed.py --quick    # two models, small vocabulary, 2 rounds, no files

One training step (forward, loss, backward, Adam) per batch at the primer's paper configuration
(``notebooks/params/primer.paper.yaml``: rows of 16 warm-up + 64 predicted tokens, 32 rows a batch, the
vocabulary of Brown with words seen at least 4 times) for each of its neural language models. Compared,
interleaved over rounds (medians):

* ``urnlib`` - as the chapter trains them: :func:`urnlib.losses.lm_loss` (the output layer only at the 64
  scored positions of a row, one fused cross-entropy node) and, for Bengio's NNLM, ``W x + U tanh(d + H x)``
  as one product;
* ``before`` - the loop's default loss, ``F.cross_entropy`` over all 80 positions with the warm-up ignored,
  and the NNLM's two products and their sum (what the committed runs were trained with);
* ``floor (b)`` - the output layer's three products at the scored rows (forward, and the gradients of its
  input and weight), timed as ``torch.mm`` at those shapes; floor (a) is their flops at the measured GEMM
  peak.

Target: ``urnlib <= 3 x floor (b)``. Writes ``book/performance/lm_speed.md`` and
``benchmarks/results/lm_speed.json``.
"""

from __future__ import annotations

from pathlib import Path

import torch

from recurrent_speed import _table, gemm_peak_flops, interleaved, machine, timing_arguments, write_report
from urnlib import losses
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
    from urnlib.experiments import primer, primer_lm

    return len(primer_lm.make_data(primer.Config.paper().brown_task()).vocab.tokens)


def models(quick: bool) -> list[str]:
    from urnlib.experiments import primer

    texts = primer.Config.paper().lm_models
    return texts[:1] + texts[-1:] if quick else texts


def build(text: str, V: int, before: bool) -> torch.nn.Module:
    from urnlib.experiments import primer_lm

    spec = primer_lm.lm_spec(text)
    model = primer_lm.build(spec, V, V - 1)
    if before and spec["kind"] == "nnlm":
        old = TwoProductNNLM(V, spec["n"], spec["m"], spec["h"], direct=spec["direct"], start_id=V - 1)
        old.load_state_dict(model.state_dict())
        model = old
    return model


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


def main() -> None:
    args = timing_arguments(__doc__, rounds=5, reps=2).parse_args()
    torch.set_num_threads(args.threads)
    rounds = 2 if args.quick else args.rounds
    V = vocabulary_size(args.quick)
    B, warmup, window = 32, 16, 64
    torch.manual_seed(0)
    x = torch.randint(0, V - 1, (B, warmup + window))
    y = torch.randint(0, V - 1, (B, warmup + window))
    y[:, :warmup] = -100
    scored = int((y != -100).sum())
    peak = gemm_peak_flops()
    rows = []
    for text in models(args.quick):
        new, old = build(text, V, False), build(text, V, True)
        width = new.readout_parts(x[:1])[0].shape[-1]
        floor, flops = floor_of(scored, width, V)
        fns = {"urnlib": step_of(new, x, y, losses.lm_loss),
               "before": step_of(old, x, y, token_cross_entropy), "floor (b)": floor}
        t = interleaved(fns, rounds, args.reps)
        ratio = t["urnlib"] / t["floor (b)"]
        rows.append({"model": text, "V": V, "output width": width, "urnlib (s)": t["urnlib"],
                     "before (s)": t["before"], "floor (b) (s)": t["floor (b)"],
                     "floor (a) (s)": flops / peak,
                     "urnlib / before": t["urnlib"] / t["before"], "urnlib / floor (b)": ratio,
                     "target met": "yes" if ratio <= TARGET else "no"})
        print(rows[-1], flush=True)
    report = {"machine": machine(), "gemm_peak_gflops": peak / 1e9, "batch": [B, warmup + window],
              "scored_positions": scored, "rows": rows}
    write_report(to_markdown(report), report, JSON, BOOK_TABLE, args.quick)


def to_markdown(report: dict) -> str:
    m = report["machine"]
    head = (f"*Measured {m['date']} on {m['cpu']}, {m['threads']} threads, torch {m['torch']}; GEMM peak "
            f"{report['gemm_peak_gflops']:.0f} GFLOP/s. One training step of {report['batch'][0]} rows of "
            f"{report['batch'][1]} tokens ({report['scored_positions']:,} scored); seconds per step, "
            "medians of interleaved rounds.*\n\n")
    cols = ["model", "V", "output width", "urnlib (s)", "before (s)", "floor (b) (s)", "floor (a) (s)",
            "urnlib / before", "urnlib / floor (b)", "target met"]
    return head + _table(report["rows"], cols) + "\n"


if __name__ == "__main__":
    main()
