# Sourced by the other scripts, and by the user before typing Dagster commands at the project root:
# the shared Dagster instance, the project's code location and Python, and a quiet console.
# Run rather than sourced (`bash scripts/env.sh --help`), it only says so: exported variables
# would die with its own shell.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  cat <<'USAGE'
Usage: source scripts/env.sh   (from the project directory)

Sets DAGSTER_HOME (default ./dagster_home, the instance the UI shows), puts the
project's .venv first on PATH, makes `dagster asset ...` and `dagster job ...`
find the code location `pipeline`, and turns off telemetry and two Dagster
notices. Running it instead of sourcing it changes nothing.
USAGE
  exit 0
fi
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/dagster_home}"
# `dagster asset ...` and `dagster job ...` read neither workspace.yaml nor [tool.dagster]: only -m/-f
# or the variable DAGSTER_MODULE_NAME. Exporting that variable would break `dagster dev` (Dagster 1.13
# hands it to the webserver beside its own --workspace; the webserver exits on the pair and
# `dagster dev` waits forever), so it is given to those two command groups only, when no code location
# is named. The `dg` commands read [tool.dg] of pyproject.toml instead.
dagster() {
  local arg named=""
  for arg in "$@"; do
    case "$arg" in -m|--module-name|-m*|--module-name=*|-f|--python-file|-f*|--python-file=*|--package-name|--package-name=*) named=1 ;; esac
  done
  case "${1:-}" in
    asset|job) if [ -z "$named" ]; then DAGSTER_MODULE_NAME="${DAGSTER_MODULE_NAME:-pipeline}" command dagster "$@"; return; fi ;;
  esac
  command dagster "$@"
}
export -f dagster
# the project's .venv first on PATH, so `dagster` and `dg` as typed are the project's own, and
# active as `source .venv/bin/activate` would make it (VIRTUAL_ENV: `dg` warns on every call when
# the active environment is not the project's .venv)
if [ -d "$PWD/.venv/bin" ]; then
  case ":$PATH:" in *":$PWD/.venv/bin:"*) ;; *) export PATH="$PWD/.venv/bin:$PATH" ;; esac
  export VIRTUAL_ENV="$PWD/.venv"
fi
export GX_ANALYTICS_ENABLED="${GX_ANALYTICS_ENABLED:-false}" DAGSTER_DISABLE_TELEMETRY="${DAGSTER_DISABLE_TELEMETRY:-1}"
# Dagster's own warnings, filtered here because the project cannot fix them at their source:
# `dagster asset materialize` and `dagster dev` are "superseded" by `dg launch --assets` and
# `dg dev` in 1.13, but `dg launch` itself still calls the first; the README documents both
# forms and keeps the `dagster` commands working. (The two "beta" notices of the APIs the assets
# use on purpose are silenced in assets/__init__.py, so an installed wheel is quiet too.)
# Each filter matches the start of one message (PYTHONWARNINGS takes literal prefixes), so any
# other warning, including new ones from Dagster, still shows.
_nurd_quiet="ignore:Function \`asset_materialize_command\` is superseded"
_nurd_quiet="$_nurd_quiet,ignore:Function \`dev_command\` is superseded"
export PYTHONWARNINGS="${PYTHONWARNINGS:+$PYTHONWARNINGS,}$_nurd_quiet"
unset _nurd_quiet
