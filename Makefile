.PHONY: venv run test golden

VENV := .venv

# Create the virtualenv (if missing), install rw_cli with its test extras, and make sure
# a Java runtime is there for the Spark engine.
venv: $(VENV)/.installed
	@command -v java >/dev/null 2>&1 || (apt-get update && apt-get install -y openjdk-17-jre-headless)

# reinstall only when the project's dependencies change
$(VENV)/.installed: pyproject.toml
	@test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q -e '.[test]'
	@touch $@

run: venv
	@$(VENV)/bin/rw $(ARGS)

# Every test: pytest on one worker per core (pytest-xdist; `xdist_group` keeps tests that share
# a server on one worker, tests marked slow start first), and meanwhile the slt specs, whose
# output follows pytest's (with the ten slowest tests). Fails if either fails.
test: venv
	@log=$$(mktemp); $(VENV)/bin/rw slt slt/ >$$log 2>&1 & slt=$$!; \
	trap 'kill $$slt 2>/dev/null; rm -f $$log' INT TERM; \
	$(VENV)/bin/pytest -q -n auto --dist loadgroup --durations=10; status=$$?; \
	wait $$slt || status=1; echo "rw slt slt/:"; cat $$log; rm -f $$log; exit $$status

# regenerate the golden files of planner tests (EXPLAIN output) after an intended change
golden: venv
	RW_UPDATE_GOLDEN=1 $(VENV)/bin/pytest -q tests/sql/test_explain_golden.py tests/sql/test_planner_rules.py tests/sql/test_transpile.py
