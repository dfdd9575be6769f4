"""Code shared by the MCP-Atlas task and its CLI (servers, workspace, judge, grading)."""
