#!/usr/bin/env bash
# Runs a test command (an example script) from the same clean environment as the C++ tests:
# every variable in CLEF_HERMETIC_VARIABLES (tests/CMakeLists.txt sets it from the one list) is
# unset first. A non-zero exit is said in a line ctest's FAIL_REGULAR_EXPRESSION matches, since
# a PASS_REGULAR_EXPRESSION alone would pass a script that printed the right text then failed.
for variable in ${CLEF_HERMETIC_VARIABLES:?set by tests/CMakeLists.txt}; do unset "$variable"; done
unset CLEF_HERMETIC_VARIABLES
export TMPDIR="${TEST_TMPDIR:-/tmp}"
# No config file but the one a test writes: not the developer's ~/.config/clef/config.toml.
export XDG_CONFIG_HOME="${TEST_TMPDIR:-/nonexistent}/no-config-home"
"$@"
code=$?
[ "$code" -eq 0 ] || echo "run_hermetic: the test command exited with status $code"
exit "$code"
