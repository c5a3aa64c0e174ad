"""What the chapters' training functions share: the weights a run stores, and the training of a run that is
one next-symbol model (:func:`urnlib.train.fit` with the chapter's evaluation callback)."""

from __future__ import annotations

__all__ = ["WEIGHTS_LIMIT", "kept_weights", "train_token_model"]

WEIGHTS_LIMIT = 2 * 2**20  #: bytes: a run's weights are stored up to this size (see :func:`kept_weights`)


def kept_weights(model) -> tuple[dict, bool]:
    """``(weights to store, whether they are stored)``: the model's ``state_dict`` up to
    :data:`WEIGHTS_LIMIT` bytes, else nothing (a language model over an 18k-word vocabulary has 9-24 MB; a
    chapter whose runs are that large computes every number it shows at training time instead)."""
    weights = model.state_dict()
    stored = sum(t.numel() * t.element_size() for t in weights.values()) <= WEIGHTS_LIMIT
    return (weights if stored else {}), stored


def train_token_model(spec, checkpoint, train, test, vocab_size: int, evaluate=None, callbacks=(), valid=None,
                      **context):
    """The training function shared by the chapters whose runs are one next-symbol model each: build the run's
    model (seeded by its training seed), :func:`urnlib.train.fit` it with the chapter's ``evaluate`` callback,
    and keep the row of the epoch whose weights it keeps (the monitor's best with ``keep_best``, else the
    last) with the parameter count as its final metrics (and, with a monitor, its best epoch and whether
    patience stopped it).

    Args:
        spec: the run (its params hold ``model`` and ``train``).
        checkpoint: where the loop checkpoints (a path or a sink, see :func:`urnlib.train.fit`).
        train, test: :class:`~urnlib.tokens.TokenData`.
        valid: validation data (the per-epoch ``val_loss``; ``None``: none).
        vocab_size: V.
        evaluate: the per-epoch metrics of the chapter.
        callbacks: :class:`~urnlib.callbacks.Callback` objects of the loop (e.g. a chapter's stopping rule).
        **context: keyword arguments of the model (see :func:`urnlib.models.build_model`).
    """
    from urnlib.models import build_model, count_parameters
    from urnlib.results import Trained
    from urnlib.train import TrainConfig, fit, seed_everything

    cfg = TrainConfig(**spec.params["train"])
    seed_everything(cfg.seed)
    model = build_model(spec.params["model"], vocab_size, **context)
    history, _ = fit(model, train, test, cfg, valid=valid, evaluate=evaluate, checkpoint=checkpoint,
                     desc=spec.name, callbacks=callbacks)
    # the row of the weights kept: the monitor's best epoch with keep_best, else the last epoch
    row = history.best_row if cfg.keep_best else history.rows[-1]
    final = {**row, "n_params": count_parameters(model)}
    if cfg.monitor:
        final |= {"best_epoch": history.best_epoch, "stopped_early": history.stopped_early}
    return Trained(history.rows, final, model.state_dict(), history.wall_time, history.cpu_time)
