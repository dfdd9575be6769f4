"""VitaBench tasks: the judge, re-grading."""
