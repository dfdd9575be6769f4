"""MCP-Atlas: servers, workspaces, the claims judge, re-grading, the task."""
