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

test: venv
	$(VENV)/bin/pytest -q
	$(VENV)/bin/rw slt slt/

# regenerate the golden files of planner tests (EXPLAIN output) after an intended change
golden: venv
	RW_UPDATE_GOLDEN=1 $(VENV)/bin/pytest -q tests/sql/test_explain_golden.py tests/sql/test_planner_rules.py tests/sql/test_transpile.py
