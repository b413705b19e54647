"""What a run leaves behind for people and machines: the HTML report, ``results.json``
(with its JSON Schema) and JUnit XML."""

from agentflow_eval.files.results_json import (
    ResultsFileError,
    read_results_json,
    results_json_schema,
    write_results_json,
)
from agentflow_eval.report.html import render_html, write_html
from agentflow_eval.report.index_page import render_index
from agentflow_eval.report.junit import junit_xml, write_junit

__all__ = [
    "ResultsFileError",
    "junit_xml",
    "read_results_json",
    "render_html",
    "render_index",
    "results_json_schema",
    "write_html",
    "write_junit",
    "write_results_json",
]
