"""Each trial's own environment as the agent and the end-state checks see it
(:class:`~agentflow_eval.environments.environment.Environment`), and what an
environment function is told about the trial it sets up for
(:class:`~agentflow_eval.environments.environment.TrialInfo`). Setting one up and
tearing it down is the run's job (:mod:`agentflow_eval.run.trial_environment`)."""

from agentflow_eval.environments.environment import Environment, TrialInfo

__all__ = ["Environment", "TrialInfo"]
