"""Pure statistics of the judging layer (judging.md §4-8 and §10), stdlib only.

No Dagster, no I/O, no model calls: each module turns counts or verdicts into numbers and small
frozen pydantic results that the judge and report assets store. See docs/statistics.md.
"""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.statistics.blending import (
        DEFAULT_WEIGHTS,
        DimensionScore,
        blend,
        blend_dimensions,
    )
    from evals_pipeline.statistics.calibration import (
        Calibration,
        LabelAllocation,
        allocate_labels,
        calibrate,
        calibrate_by_dimension,
        calibration_from_counts,
        cohen_kappa,
        wilson_interval,
    )
    from evals_pipeline.statistics.distributions import Z95, normal_quantile, sign_test_p
    from evals_pipeline.statistics.paired import (
        BootstrapResult,
        McNemarResult,
        PairedTable,
        bootstrap_from_indices,
        mcnemar,
        paired_bootstrap,
        paired_table,
    )
    from evals_pipeline.statistics.panel import (
        PairwiseCombination,
        PairwiseJudgeResult,
        PanelOutcome,
        PanelVote,
        PositionBias,
        combine_pairwise,
        pairwise_judge,
        pairwise_verdict,
        panel_vote,
        pool_graded_scores,
        position_bias,
        position_bias_from_counts,
        win_rate,
    )
    from evals_pipeline.statistics.rates import (
        CorrectedRate,
        LangReiczigelTerms,
        corrected_rate,
        delta_method_interval,
        lang_reiczigel_terms,
        rogan_gladen,
    )
    from evals_pipeline.statistics.trials import (
        RepeatedTrials,
        pass_at_k,
        pass_hat_k,
        repeated_trials,
        suite_pass_at_k,
        suite_pass_hat_k,
    )

# Each name loads its module when first used, so importing one submodule of the package
# does not run the others (and no submodule's import of a sibling loops back through here).
_MODULES = {
    "BootstrapResult": "paired",
    "Calibration": "calibration",
    "CorrectedRate": "rates",
    "DEFAULT_WEIGHTS": "blending",
    "DimensionScore": "blending",
    "LabelAllocation": "calibration",
    "LangReiczigelTerms": "rates",
    "McNemarResult": "paired",
    "PairedTable": "paired",
    "PairwiseCombination": "panel",
    "PairwiseJudgeResult": "panel",
    "PanelOutcome": "panel",
    "PanelVote": "panel",
    "PositionBias": "panel",
    "RepeatedTrials": "trials",
    "Z95": "distributions",
    "allocate_labels": "calibration",
    "blend": "blending",
    "blend_dimensions": "blending",
    "bootstrap_from_indices": "paired",
    "calibrate": "calibration",
    "calibration_from_counts": "calibration",
    "calibrate_by_dimension": "calibration",
    "cohen_kappa": "calibration",
    "combine_pairwise": "panel",
    "corrected_rate": "rates",
    "delta_method_interval": "rates",
    "lang_reiczigel_terms": "rates",
    "mcnemar": "paired",
    "normal_quantile": "distributions",
    "paired_bootstrap": "paired",
    "paired_table": "paired",
    "pairwise_judge": "panel",
    "pairwise_verdict": "panel",
    "panel_vote": "panel",
    "pass_at_k": "trials",
    "pass_hat_k": "trials",
    "pool_graded_scores": "panel",
    "position_bias": "panel",
    "position_bias_from_counts": "panel",
    "repeated_trials": "trials",
    "rogan_gladen": "rates",
    "sign_test_p": "distributions",
    "suite_pass_at_k": "trials",
    "suite_pass_hat_k": "trials",
    "wilson_interval": "calibration",
    "win_rate": "panel",
}

__getattr__ = lazy_exports(__name__, _MODULES)

__all__ = [
    "DEFAULT_WEIGHTS",
    "Z95",
    "BootstrapResult",
    "Calibration",
    "CorrectedRate",
    "DimensionScore",
    "LabelAllocation",
    "LangReiczigelTerms",
    "McNemarResult",
    "PairedTable",
    "PairwiseCombination",
    "PairwiseJudgeResult",
    "PanelOutcome",
    "PanelVote",
    "PositionBias",
    "RepeatedTrials",
    "allocate_labels",
    "blend",
    "blend_dimensions",
    "bootstrap_from_indices",
    "calibrate",
    "calibrate_by_dimension",
    "calibration_from_counts",
    "cohen_kappa",
    "combine_pairwise",
    "corrected_rate",
    "delta_method_interval",
    "lang_reiczigel_terms",
    "mcnemar",
    "normal_quantile",
    "paired_bootstrap",
    "paired_table",
    "pairwise_judge",
    "pairwise_verdict",
    "panel_vote",
    "pass_at_k",
    "pass_hat_k",
    "pool_graded_scores",
    "position_bias",
    "position_bias_from_counts",
    "repeated_trials",
    "rogan_gladen",
    "sign_test_p",
    "suite_pass_at_k",
    "suite_pass_hat_k",
    "wilson_interval",
    "win_rate",
]
