"""People checking the judges: labels of judged trials (kept beside the run and in a
label bank by the content the judge was shown), the sample a review asks (stratified by
the judge's verdict), labels imported from files, and each judge's agreement with the
labels (agreement, sensitivity, specificity, Cohen's κ, the pass rate corrected for the
judge's error)."""

from agentflow_eval.review.agreement import judge_agreement
from agentflow_eval.review.bank import LabelBank
from agentflow_eval.review.importing import read_label_rows
from agentflow_eval.review.labels import LABELS_FILE, Label, append_labels, read_labels
from agentflow_eval.review.recording import gather_labels, record_labels
from agentflow_eval.review.sampling import ReviewItem, ReviewPlan, plan_review
from agentflow_eval.review.verdicts import VerdictLedger

__all__ = [
    "LABELS_FILE",
    "Label",
    "LabelBank",
    "ReviewItem",
    "ReviewPlan",
    "VerdictLedger",
    "append_labels",
    "gather_labels",
    "judge_agreement",
    "plan_review",
    "read_label_rows",
    "read_labels",
    "record_labels",
]
