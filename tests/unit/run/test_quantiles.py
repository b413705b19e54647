import pytest
from scipy.stats import binom

from agentflow_eval.models.results import TrialFigures
from agentflow_eval.run.efficiency import case_efficiency, value_spread
from agentflow_eval.run.quantiles import binomial_cdf, quantile, quantile_interval


def test_quantile_interpolates_between_order_statistics():
    assert quantile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
    assert quantile(list(range(1, 11)), 0.9) == pytest.approx(9.1)
    assert quantile([7.0], 0.9) == 7.0


def test_median_interval_of_ten_is_the_textbook_second_to_ninth():
    # n = 10, p = 0.5: [x(2), x(9)] covers P(2 <= B <= 8) = 1 - 2 * 11/1024 = 0.978515625
    estimate = quantile_interval([float(v) for v in range(10, 0, -1)], 0.5)
    assert (estimate.value, estimate.low, estimate.high) == (5.5, 2.0, 9.0)
    assert estimate.coverage == pytest.approx(1 - 22 / 1024)


def test_p90_interval_of_ten_stops_at_the_largest_and_says_its_coverage():
    # B ~ Bin(10, 0.9): P(B <= 6) = 0.0128 <= 0.025 < P(B <= 7), so the lower bound is
    # x(7); no k < 10 leaves P(B >= k) <= 0.025, so the upper bound is the largest value
    estimate = quantile_interval([float(v) for v in range(1, 11)], 0.9)
    assert (estimate.low, estimate.high) == (7.0, 10.0)
    assert estimate.coverage == pytest.approx(binom.cdf(9, 10, 0.9) - binom.cdf(6, 10, 0.9))
    assert estimate.coverage < 0.95


def test_large_samples_reach_the_asked_coverage():
    values = [float(v) for v in range(1, 201)]
    for p in (0.5, 0.9):
        estimate = quantile_interval(values, p)
        assert 0.95 <= estimate.coverage < 0.97
        assert estimate.low <= estimate.value <= estimate.high


def test_a_single_value_has_an_interval_of_no_coverage():
    estimate = quantile_interval([3.0], 0.5)
    assert (estimate.value, estimate.low, estimate.high, estimate.coverage) == (3, 3, 3, 0)


def test_binomial_cdf_matches_scipy():
    for n, p in ((5, 0.5), (40, 0.9), (3000, 0.9)):
        ours = binomial_cdf(n, p)
        assert ours == pytest.approx(list(binom.cdf(range(n + 1), n, p)), abs=1e-9)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="at least one value"):
        quantile([], 0.5)
    with pytest.raises(ValueError, match="p must be within"):
        quantile([1.0], 1.5)


def _figures(
    index: int, cost: float | None, tokens: int, calls: int, tools: int, ms: float
) -> TrialFigures:
    return TrialFigures(
        trial_index=index,
        cost_usd=cost,
        input_tokens=tokens - 10,
        output_tokens=10,
        model_calls=calls,
        tool_calls=tools,
        latency_ms=ms,
    )


def test_case_efficiency_summarises_each_measure_by_hand():
    figures = [
        _figures(0, 0.010, 100, 2, 1, 1000.0),
        _figures(1, 0.030, 300, 4, 3, 3000.0),
        _figures(2, 0.020, 200, 3, 2, 2000.0),
    ]
    summary = case_efficiency(figures)
    assert summary is not None and summary.cost_usd is not None
    assert summary.cost_usd.median == pytest.approx(0.020)
    assert summary.total_tokens.median == 200 and summary.total_tokens.p90 == 280
    assert summary.model_calls.median == 3 and summary.tool_calls.max == 3
    # three values: the median's interval is [x(1), x(3)], covering 1 - 2 / 8
    latency = summary.latency_ms
    assert (latency.median, latency.median_low, latency.median_high) == (2000, 1000, 3000)
    assert latency.median_coverage == pytest.approx(0.75)
    assert latency.p90 == pytest.approx(2800.0) and latency.trials == 3


def test_case_cost_is_unknown_when_any_trial_cost_is():
    summary = case_efficiency([_figures(0, 0.01, 10, 1, 0, 5.0), _figures(1, None, 10, 1, 0, 5)])
    assert summary is not None and summary.cost_usd is None
    assert summary.total_tokens.median == 10
    assert case_efficiency([]) is None


def test_value_spread_keeps_the_extremes():
    spread = value_spread([5.0, 1.0, 9.0])
    assert (spread.min, spread.max, spread.median) == (1.0, 9.0, 5.0)
