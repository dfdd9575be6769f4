"""VitaBench on Inspect: dataset, prompts, the conversation loop, the rubric judge and
re-grading (`envfactory vitabench grade`)."""
