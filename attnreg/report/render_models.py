"""The text and table rows of the softmax and network reports' sections
(:mod:`attnreg.report.modelfigures`); :mod:`attnreg.report.render_figures` dispatches to them.
"""

from __future__ import annotations

from attnreg.report.modelfigures import NetworkFigures, PermutationSetup, SoftmaxFigures
from attnreg.report.rformat import fmt_g

__all__ = ["network_lines", "network_rows", "permutation_lines", "softmax_lines",
           "softmax_rows"]


def softmax_lines(s: SoftmaxFigures) -> list[str]:
    """The notes after the partial effects (a blank line first)."""
    heads = ", ".join(f"{a:.3f} / {r:.2f}" for a, r in zip(s.alpha, s.effective_rank, strict=True))
    return [
        "",
        f"Softmax attention regression: {s.n_heads} heads, value = {s.value!r}, "
        f"kernel = {s.kernel!r}, penalty lambda = {fmt_g(s.lam, 4)}",
        "  heads (alpha / effective rank of Omega): " + heads,
        *([f"  keys: {s.n_landmarks} landmarks (cluster centres of the training rows; each "
           "landmark's weight is shared among its rows)"] if s.n_landmarks else []),
        *([f"  keys: each query's {s.n_neighbours} nearest training rows in the learned metric "
           f"(the other rows get no weight); {s.effective_neighbours:.0f} effective neighbours "
           "on average (close to that number: a kernel wider than the sets)"]
          if s.n_neighbours else []),
        f"R-squared: in-sample {fmt_g(s.r_squared)}, validation {fmt_g(s.val_r2)}, "
        f"leave-one-out {fmt_g(s.loo_r2)}  (n = {s.nobs})",
        f"L-BFGS: {s.n_iter} iterations, {s.n_evals} loss evaluations, "
        + ("converged" if s.converged else "NOT converged")
        + f"; training {'leave-one-out (self-masked)' if s.mask_self else 'in-sample'}",
        "Classical standard errors are not available for this estimator: the metric is "
        "learned and selected on a validation split, so no t or F tests are reported.",
    ]


def softmax_rows(s: SoftmaxFigures) -> list[tuple[str, str]]:
    """The fit's figures as a table."""
    heads = [(f"head {m + 1}: alpha / effective rank", f"{a:.3f} / {r:.2f}")
             for m, (a, r) in enumerate(zip(s.alpha, s.effective_rank, strict=True))]
    return [("Heads", str(s.n_heads)), ("Value", s.value), ("Kernel", s.kernel),
            ("Penalty lambda", fmt_g(s.lam)), *heads,
            ("Keys", _keys(s)),
            ("R-squared (in-sample)", fmt_g(s.r_squared)),
            ("R-squared (validation)", fmt_g(s.val_r2)),
            ("R-squared (leave-one-out)", fmt_g(s.loo_r2)), ("Observations", str(s.nobs)),
            ("L-BFGS iterations", str(s.n_iter)), ("Loss evaluations", str(s.n_evals)),
            ("Converged", "yes" if s.converged else "no"),
            ("Standard errors", "none: the metric is learned and selected on a validation split")]


def _keys(s: SoftmaxFigures) -> str:
    if s.n_landmarks:
        return f"{s.n_landmarks} landmarks"
    return f"{s.n_neighbours} nearest rows" if s.n_neighbours else "every training row"


def permutation_lines(s: PermutationSetup) -> list[str]:
    """The heading of the permutation importance table."""
    return [f"Permutation importance (drop in R-squared when a column is shuffled; "
            f"{s.n_validation} validation rows, {s.n_shuffles} shuffles):"]


def network_lines(s: NetworkFigures) -> list[str]:
    """The notes after the importance table (a blank line first)."""
    stop = (f"early stopping after {s.patience} epochs without improvement" if s.stopped_early
            else f"max_epochs = {s.max_epochs} reached")
    schedule = "" if s.schedule == "none" else ", warm-up + cosine schedule"
    return [
        "",
        f"{s.architecture}; {s.n_params:,} trainable parameters",
        f"Training: {s.optimizer} (lr {fmt_g(s.lr)}, weight decay {fmt_g(s.weight_decay)}"
        f"{schedule}), batch {s.batch_size}, gradient clipping {s.clip_norm}, seed {s.seed}",
        f"  {s.n_epochs} epochs, best epoch {s.best_epoch} restored ({stop})",
        f"  validation MSE (standardised y): first {fmt_g(s.val_loss_first)}, best "
        f"{fmt_g(s.val_loss_best)}, last {fmt_g(s.val_loss_last)}",
        f"R-squared: in-sample {fmt_g(s.r_squared)} (n = {s.n_fit}), "
        f"validation {fmt_g(s.val_r2)} (n = {s.n_val})",
        "No standard errors: a network has no sampling theory for its weights; the table "
        "ranks the design columns by permutation instead.",
    ]


def network_rows(s: NetworkFigures) -> list[tuple[str, str]]:
    """The fit's figures as a table."""
    return [("Architecture", s.architecture), ("Trainable parameters", f"{s.n_params:,}"),
            ("Optimizer", s.optimizer), ("Learning rate", fmt_g(s.lr)),
            ("Weight decay", fmt_g(s.weight_decay)), ("Batch size", str(s.batch_size)),
            ("Epochs", str(s.n_epochs)), ("Best epoch", str(s.best_epoch)),
            ("Validation MSE (first)", fmt_g(s.val_loss_first)),
            ("Validation MSE (best)", fmt_g(s.val_loss_best)),
            ("Validation MSE (last)", fmt_g(s.val_loss_last)),
            ("R-squared (in-sample)", fmt_g(s.r_squared)), ("Training rows", str(s.n_fit)),
            ("R-squared (validation)", fmt_g(s.val_r2)), ("Validation rows", str(s.n_val)),
            ("Standard errors", "none: the table ranks the design columns by permutation")]

