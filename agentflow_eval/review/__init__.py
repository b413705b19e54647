"""People checking the judges: labels of judged trials, the sample a review asks, and
the judge's agreement with the labels."""
